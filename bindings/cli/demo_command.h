// `sluice demo`: what sluice is for, in a minute — a realistic data set
// (generated once into a cache when none is given) through a default
// training pipeline, with a live view of every stage and a summary. Two
// workloads: lc0 (chess positions, the default) and audio (labelled clips
// in Arrow files to log-mel spectrograms).
#ifndef SLUICE_BINDINGS_CLI_DEMO_COMMAND_H_
#define SLUICE_BINDINGS_CLI_DEMO_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace sluice::cli {

inline constexpr char kDemoSummary[] =
    "run the default lc0 or audio pipeline on generated data with a live "
    "view";

// Runs `sluice demo` with the words after "demo"; exit code 0, 2 for a
// usage error, 1 when data generation or the pipeline failed.
int RunDemoCommand(const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_DEMO_COMMAND_H_
