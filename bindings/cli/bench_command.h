// `sluice bench`: io-throughput and pipeline benchmarks on the user's own
// machine and storage.
//
//   sluice bench io /data/lc0 --json
//   sluice bench io big.tar --compare-fio
//   sluice bench pipeline --threads 1,2
#ifndef SLUICE_BINDINGS_CLI_BENCH_COMMAND_H_
#define SLUICE_BINDINGS_CLI_BENCH_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace sluice::cli {

inline constexpr char kBenchSummary[] =
    "measure read throughput (bench io) or a pipeline (bench pipeline)";

// Runs `sluice bench` with the words after "bench". Prints a table (and
// with --json one JSON object). Returns 0, 2 for a usage error, 1 when a
// measurement failed.
int RunBenchCommand(const std::vector<std::string>& args, std::ostream& out,
                    std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_BENCH_COMMAND_H_
