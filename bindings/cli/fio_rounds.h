// The cases of `sluice bench io --compare-fio` and their rounds: every case
// (fio_comparison.h) is measured by both tools in every round, the cases
// take turns within a round and the tool that goes first alternates, so a
// slow spell of the machine lands on both; each case reports the median and
// range of each tool and of the per-round ratio sluice / fio.
#ifndef SLUICE_BINDINGS_CLI_FIO_ROUNDS_H_
#define SLUICE_BINDINGS_CLI_FIO_ROUNDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "bindings/cli/fio_comparison.h"

namespace sluice::cli {

// One line of the comparison.
struct FioCase {
  FioJob job;
  // One of FioCaseNames().
  std::string label;
  // The longest either tool may take for one run of it: CompareWithFio
  // ends the process naming the case and the tool past that (a reader that
  // hangs must not hold the comparison without a word).
  absl::Duration deadline = absl::Minutes(2);
};

// The median, smallest and largest of a case's rounds.
struct Spread {
  double median = 0;
  double low = 0;
  double high = 0;
};

// Spread of `values` (all zero when empty).
Spread SpreadOf(std::vector<double> values);

struct FioCaseResult {
  FioCase fio_case;
  std::vector<double> fio_gbps;     // one per round
  std::vector<double> sluice_gbps;  // one per round
  std::vector<double> ratios;       // sluice / fio, one per round
};

// What the comparison settles on.
struct FioCaseSettings {
  std::string path;
  uint64_t file_bytes = 0;
  unsigned queue_depth = 32;  // of the 1 MiB cases (64 KiB: depth 1)
  int seconds = 2;
  int cpu = -1;
  bool cold = true;        // pages can be dropped
  bool direct = true;      // the file system does O_DIRECT
  bool registered = true;  // registered buffers work here
  // The cases to run (of FioCaseNames()); empty: all.
  std::vector<std::string> only;
};

// The names of the cases, in the order they run: "cold", "warm", "direct",
// "warm-registered", "direct-registered" (fio --fixedbufs --registerfiles
// against sluice's registered buffers and file), "warm-default-path",
// "cold-default-path" (sluice copies what the page cache holds at once).
const std::vector<std::string>& FioCaseNames();

// How long one run of `job` may take: a minute beyond its timed seconds
// or, for a cold job, beyond its `cold_bytes` at 4 MB/s (a slow disk).
absl::Duration FioCaseDeadline(const FioJob& job, uint64_t cold_bytes);

// The cases for `settings`: 1 MiB blocks at the queue depth and 64 KiB
// blocks at depth 1, each cold, warm, direct, warm and direct with
// registered buffers, and warm and cold through sluice's default path;
// those the settings rule out or `only` leaves out are not run.
std::vector<FioCase> FioCases(const FioCaseSettings& settings);

// Runs every case `rounds` times. Stops at the first error of either tool
// (returned with the results so far); a run past its case's deadline ends
// the process (DeadlineWatchdog).
struct FioComparison {
  std::vector<FioCaseResult> results;
  std::string error;
};
FioComparison CompareWithFio(const std::vector<FioCase>& cases, int rounds);

// The CPU both tools are pinned to: the last one this process may use.
int ComparisonCpu();

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_FIO_ROUNDS_H_
