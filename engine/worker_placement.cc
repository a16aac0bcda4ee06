#include "engine/worker_placement.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <cerrno>

namespace sluice {

std::vector<int> AllowedCpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

int ProcessNiceness() {
  errno = 0;
  const int niceness = ::getpriority(PRIO_PROCESS, 0);
  return errno == 0 ? niceness : 0;
}

std::vector<int> PinnedCpus(WorkerPlacement placement, unsigned threads,
                            std::span<const int> allowed, int niceness) {
  const bool pin =
      !allowed.empty() && (placement == WorkerPlacement::kPinned ||
                           (placement == WorkerPlacement::kAuto &&
                            threads == allowed.size() && niceness <= 0));
  std::vector<int> cpus;
  if (!pin) return cpus;
  cpus.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) {
    cpus.push_back(allowed[i % allowed.size()]);
  }
  return cpus;
}

bool PinCurrentThread(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof(one), &one) == 0;
}

}  // namespace sluice
