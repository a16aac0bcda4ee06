#include "thread_cpu.h"

#include <time.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace trainer {

double ThreadCpuSeconds(std::string_view prefix) {
  double seconds = 0;
  std::error_code error;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/self/task", error)) {
    std::string name;
    std::getline(std::ifstream(task.path() / "comm"), name);
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    // schedstat: "<ns on CPU> <ns waiting for a CPU> <timeslices>".
    long long on_cpu_ns = 0;
    if (std::ifstream(task.path() / "schedstat") >> on_cpu_ns) {
      seconds += on_cpu_ns * 1e-9;
    }
  }
  return seconds;
}

double CurrentThreadCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec + now.tv_nsec * 1e-9;
}

}  // namespace trainer
