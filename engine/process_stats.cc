#include "engine/process_stats.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace sluice {
namespace {

double Seconds(const timeval& time) {
  return static_cast<double>(time.tv_sec) + time.tv_usec / 1e6;
}

// Entries of /proc/self/fd, less the one this listing opens.
uint64_t CountOpenFds() {
  DIR* directory = opendir("/proc/self/fd");
  if (directory == nullptr) return 0;
  uint64_t count = 0;
  while (const dirent* entry = readdir(directory)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(directory);
  return count > 0 ? count - 1 : 0;
}

// Seconds since the epoch at which the system booted (/proc/stat btime).
double BootTimeSeconds() {
  std::ifstream stat("/proc/stat");
  std::string key;
  while (stat >> key) {
    if (key == "btime") {
      double boot = 0;
      stat >> boot;
      return boot;
    }
    stat.ignore(1 << 20, '\n');
  }
  return 0;
}

// When this process started, seconds since the epoch: field 22 of
// /proc/self/stat (clock ticks after boot).
double StartTimeSeconds() {
  std::ifstream file("/proc/self/stat");
  std::string line;
  if (!std::getline(file, line)) return 0;
  // The command name (field 2) may hold spaces and parentheses.
  const size_t name_end = line.rfind(')');
  if (name_end == std::string::npos) return 0;
  std::istringstream fields(line.substr(name_end + 2));
  std::string field;
  // Fields 3..21, then starttime.
  for (int i = 3; i <= 21 && fields >> field; ++i) {
  }
  unsigned long long ticks = 0;
  if (!(fields >> ticks)) return 0;
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (ticks_per_second <= 0) return 0;
  return BootTimeSeconds() + static_cast<double>(ticks) / ticks_per_second;
}

// Virtual and resident size, bytes (/proc/self/statm, in pages).
struct MemoryPages {
  uint64_t virtual_bytes = 0;
  uint64_t rss_bytes = 0;
};

MemoryPages ReadMemory() {
  MemoryPages memory;
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return memory;
  unsigned long long size_pages = 0;
  unsigned long long resident_pages = 0;
  if (std::fscanf(statm, "%llu %llu", &size_pages, &resident_pages) == 2) {
    const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    memory.virtual_bytes = size_pages * page;
    memory.rss_bytes = resident_pages * page;
  }
  std::fclose(statm);
  return memory;
}

}  // namespace

uint64_t ReadResidentBytes() { return ReadMemory().rss_bytes; }

ProcessStats ReadProcessStats() {
  ProcessStats stats;
  const MemoryPages memory = ReadMemory();
  stats.virtual_bytes = memory.virtual_bytes;
  stats.rss_bytes = memory.rss_bytes;
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    stats.cpu_seconds = Seconds(usage.ru_utime) + Seconds(usage.ru_stime);
  }
  static const double start_time_seconds = StartTimeSeconds();
  stats.start_time_seconds = start_time_seconds;
  stats.open_fds = CountOpenFds();
  struct rlimit files {};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) stats.max_fds = files.rlim_cur;
  return stats;
}

}  // namespace sluice
