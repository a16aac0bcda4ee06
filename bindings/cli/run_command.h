// `sluice run`: runs any pipeline config with the live view.
//
//   sluice run proto/examples/lc0_train.textproto --data /data/lc0
//       --seconds 60 --metrics-json /tmp/metrics.jsonl   (one line)
#ifndef SLUICE_BINDINGS_CLI_RUN_COMMAND_H_
#define SLUICE_BINDINGS_CLI_RUN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace sluice::cli {

inline constexpr char kRunSummary[] =
    "run a pipeline config (text-format DataLoaderConfig) with a live view";

// Runs `sluice run` with the words after "run". Returns 0 when the run
// ended (limit, end of stream or Ctrl-C), 2 with a one-line message for a
// usage or config error, 1 when the pipeline failed.
int RunRunCommand(const std::vector<std::string>& args, std::ostream& out,
                  std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_RUN_COMMAND_H_
