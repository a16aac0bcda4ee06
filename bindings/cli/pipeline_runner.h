// Runs a pipeline for a person: pulls its first output, renders the live
// view, stops on a limit, end of stream or Ctrl-C, and prints a summary.
// Shared by `sluice run` and `sluice demo`.
#ifndef SLUICE_BINDINGS_CLI_PIPELINE_RUNNER_H_
#define SLUICE_BINDINGS_CLI_PIPELINE_RUNNER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice::cli {

struct RunLimits {
  // Stop after this many items of the output (0: no limit).
  uint64_t max_batches = 0;
  // Stop after this many seconds (0: no limit).
  double max_seconds = 0;
  // Append every metrics snapshot to this file as a JSON line ("" = none).
  std::string metrics_json_path;
  // Checkpoints (deterministic pipelines): write one to checkpoint_path
  // (atomically replaced) every checkpoint_every batches (0: never) and
  // when the run ends; resume from the checkpoint files resume_paths (none
  // = start afresh; several: every rank's of a data-parallel run, resumed
  // on this config's rank and world_size).
  std::string checkpoint_path;
  uint64_t checkpoint_every = 0;
  std::vector<std::string> resume_paths;
  // Write the HTML run report (bindings/report/html_report.h) here when the
  // run ends ("" = none), titled `report_title`.
  std::string report_path;
  std::string report_title;
  // Record a trace (DataLoaderConfig.trace) into this file ("" = as the
  // config says).
  std::string trace_path;
};

// What a run did, for callers that check it (tests, benchmarks).
struct RunReport {
  uint64_t batches = 0;
  double seconds = 0;
  DataLoaderMetricsProto final_metrics;
  // Ended by Ctrl-C / SIGTERM.
  bool interrupted = false;
};

// Runs `config` until a limit, end of stream, a failure or Ctrl-C; renders
// live metrics to `out` (a redrawn table when `out` is a terminal, plain
// lines otherwise) and a summary at the end, then writes the report and
// the trace. A bad config, or a report or trace file that cannot be
// written (checked before the run starts; the message names --report or
// --trace), is an InvalidArgument status; a pipeline failure an Internal
// status (after the summary was printed).
absl::StatusOr<RunReport> RunWithLiveView(const DataLoaderConfig& config,
                                          const RunLimits& limits,
                                          std::ostream& out, bool interactive);

// OK when a file can be written at `path`; else InvalidArgument naming
// the command-line option `flag` ("--report") and why.
absl::Status CheckOutputFlag(absl::string_view flag, const std::string& path);

// Points every file_path_provider stage of `config` at `directory` only.
void SetDataDirectory(const std::string& directory, DataLoaderConfig* config);

// True when file descriptor 1 is a terminal and TERM is not "dumb".
bool StdoutIsInteractive();

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_PIPELINE_RUNNER_H_
