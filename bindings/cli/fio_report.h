// The fio comparison of `sluice bench io --compare-fio` (fio_rounds.h), run
// on one file and shown as a table or as JSON.
#ifndef SLUICE_BINDINGS_CLI_FIO_REPORT_H_
#define SLUICE_BINDINGS_CLI_FIO_REPORT_H_

#include <string>
#include <vector>

#include "bindings/cli/fio_rounds.h"

namespace sluice::cli {

struct FioComparisonReport {
  FioCaseSettings settings;
  int rounds = 0;
  std::vector<FioCaseResult> results;
  // Cases left out, and why ("direct: the file system refuses O_DIRECT").
  std::vector<std::string> skipped;
  // Why the comparison stopped or never ran; empty when it ran whole.
  std::string error;

  // Lines for the terminal: what each case means, then one line per case
  // with the median and range of each tool and of the ratio.
  std::string Table() const;
  // One JSON object.
  std::string Json() const;
};

// Compares fio and sluice on `path` (see fio_comparison.h): 1 MiB blocks at
// `queue_depth`, 64 KiB at depth 1, `rounds` rounds, warm and direct runs
// of `seconds`; cold cases only if `can_evict`. Cases the machine cannot
// run (no O_DIRECT on the file system, no registered buffers) are listed
// in `skipped`; a missing fio or a failing run lands in `error`.
// `only`: the cases to run (FioCaseNames()); empty: all.
FioComparisonReport RunFioComparison(const std::string& path,
                                     unsigned queue_depth, int seconds,
                                     int rounds, bool can_evict,
                                     std::vector<std::string> only);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_FIO_REPORT_H_
