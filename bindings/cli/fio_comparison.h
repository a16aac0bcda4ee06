// fio beside sluice, like for like: `sluice bench io --compare-fio` runs
// fio's io_uring engine and sluice's io_uring reader on the same file with
// the same block size, queue depth, cache state and duration.
//
// Cold: each reads the file the same number of passes, its pages dropped
// before every pass (fio: invalidate=1 with loops, sluice: posix_fadvise
// DONTNEED). Warm: the file is read once beforehand, fio keeps the page
// cache (invalidate=0), and each reads pass after pass for the same number
// of seconds. fio reads whole blocks only (it leaves out a last partial
// block); sluice reads the tail too, a difference of under one block per
// pass.
#ifndef SLUICE_BINDINGS_CLI_FIO_COMPARISON_H_
#define SLUICE_BINDINGS_CLI_FIO_COMPARISON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::cli {

// One measurement both tools make.
struct FioJob {
  std::string path;
  uint64_t block_bytes = 1 << 20;
  unsigned queue_depth = 32;
  bool warm = true;
  int seconds = 2;  // warm runs only
  int passes = 1;   // cold runs only
};

// Cold passes over a file of `file_bytes` that read at least 256 MiB in all
// (a pass over a small file alone is too short to time), 1 to 200.
int ColdPasses(uint64_t file_bytes);

// fio's command line for `job` (argv, "fio" first): one job reading the file
// sequentially through io_uring, buffered, JSON output.
std::vector<std::string> FioArguments(const FioJob& job);

// The read bandwidth in GB/s from fio's JSON output (jobs[0].read.bw_bytes).
absl::StatusOr<double> ParseFioReadBandwidth(std::string_view json);

// Whether a `fio` program is on PATH.
bool FioInstalled();

// Runs fio for `job`; GB/s, or an error with fio's last words.
absl::StatusOr<double> RunFio(const FioJob& job);

// sluice's io_uring reader on the same job, with the same cache preparation
// as fio's (see above); GB/s.
absl::StatusOr<double> RunSluice(const FioJob& job);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_FIO_COMPARISON_H_
