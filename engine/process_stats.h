// ProcessStats: what the kernel says of this process now (Linux /proc):
// memory, CPU time, open files, start time. Read by the metrics snapshot
// (rss_bytes) and by the Prometheus exporter's process_* metrics.
//
//   ProcessStats stats = ReadProcessStats();
//   if (stats.rss_bytes > limit) ...
//
// Reading costs a few small /proc reads (tens of microseconds) and never
// fails: a figure the kernel does not give stays 0.
#ifndef SLUICE_ENGINE_PROCESS_STATS_H_
#define SLUICE_ENGINE_PROCESS_STATS_H_

#include <cstdint>

namespace sluice {

struct ProcessStats {
  uint64_t rss_bytes = 0;
  uint64_t virtual_bytes = 0;
  // User plus system CPU time of every thread, seconds.
  double cpu_seconds = 0;
  // When the process started, seconds since the Unix epoch.
  double start_time_seconds = 0;
  uint64_t open_fds = 0;
  // The soft limit on open files (RLIMIT_NOFILE).
  uint64_t max_fds = 0;
};

// The figures of the calling process now.
ProcessStats ReadProcessStats();

// Resident set size of the calling process now, bytes (one /proc read).
uint64_t ReadResidentBytes();

}  // namespace sluice

#endif  // SLUICE_ENGINE_PROCESS_STATS_H_
