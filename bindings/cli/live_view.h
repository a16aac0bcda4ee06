// LiveView: renders pipeline metrics for a person watching a run.
//
//   LiveView view(config, std::cout, /*interactive=*/isatty(1));
//   view.Render(loader.GetMetrics());     // every interval
//   view.PrintSummary(loader.GetMetrics(),
//                     report::AverageChannelFill(pipeline.GetHistory()));
//
// Interactive mode redraws one block in place (ANSI cursor movement): a
// header with batches/s, examples/s (lc0 positions/s, audio clips/s) and
// elapsed time, then one row per
// stage with its load bar, items/s, output channel fill, drops and errors.
// Every line is cut to the terminal's width, so none wraps and each redraw
// covers the whole previous block (what a shrinking block leaves below is
// erased).
// Plain mode (stdout is not a terminal: CI logs, pipes) prints one line per
// interval and never writes an escape code.
#ifndef SLUICE_BINDINGS_CLI_LIVE_VIEW_H_
#define SLUICE_BINDINGS_CLI_LIVE_VIEW_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "bindings/report/run_analysis.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice::cli {

// The first `columns` visible characters of `line`: escape sequences are
// kept and take no width. `columns` 0 keeps the whole line.
std::string ClipToColumns(const std::string& line, int columns);

class LiveView {
 public:
  // `columns`: the terminal's width for interactive mode (0: unknown, lines
  // are not cut).
  LiveView(const DataLoaderConfig& config, std::ostream& out, bool interactive,
           int columns = 0);

  // The terminal's width from now on (it may have been resized).
  void SetColumns(int columns) { columns_ = columns; }

  // Draws the latest interval (a no-op for a snapshot already drawn).
  void Render(const DataLoaderMetricsProto& metrics);
  // Totals since start, the bottleneck stage (bindings/report/
  // run_analysis.h, from the run's average channel `fill`) and any error.
  void PrintSummary(const DataLoaderMetricsProto& metrics,
                    const report::ChannelFill& fill);

 private:
  void RenderTable(const DataLoaderMetricsProto& metrics);
  void RenderLine(const DataLoaderMetricsProto& metrics);

  const DataLoaderConfig& config_;
  std::ostream& out_;
  const bool interactive_;
  int columns_;
  int lines_drawn_ = 0;
  int64_t last_snapshot_ = -1;
};

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_LIVE_VIEW_H_
