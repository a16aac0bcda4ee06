// `sluice gen`: writes synthetic lc0 training data (see
// stages/lc0/format/data_generator.h) as loose chunks or tar archives.
//
//   sluice gen tar /tmp/data --games 1000 --games-per-tar 100 --seed 7
#ifndef SLUICE_BINDINGS_CLI_GEN_COMMAND_H_
#define SLUICE_BINDINGS_CLI_GEN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace sluice::cli {

// One line for the command list of `sluice --help`.
inline constexpr char kGenSummary[] =
    "write synthetic lc0 training data (loose .gz chunks or tars)";

// Runs `sluice gen` with the words after "gen". Prints a summary of what was
// written to `out`. Returns the exit code: 0 on success (or --help), 2 with
// a one-line message on `err` for a usage error, 1 when writing failed.
int RunGenCommand(const std::vector<std::string>& args, std::ostream& out,
                  std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_GEN_COMMAND_H_
