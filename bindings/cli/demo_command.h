// `sluice demo`: what sluice is for, in a minute — a realistic lc0 data set
// (generated once into a cache when none is given) through the default
// training pipeline, with a live view of every stage and a summary.
#ifndef SLUICE_BINDINGS_CLI_DEMO_COMMAND_H_
#define SLUICE_BINDINGS_CLI_DEMO_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace sluice::cli {

inline constexpr char kDemoSummary[] =
    "run the default lc0 pipeline on generated data with a live view";

// Runs `sluice demo` with the words after "demo"; exit code 0, 2 for a
// usage error, 1 when data generation or the pipeline failed.
int RunDemoCommand(const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_DEMO_COMMAND_H_
