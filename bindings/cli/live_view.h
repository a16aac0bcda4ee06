// LiveView: renders pipeline metrics for a person watching a run.
//
//   LiveView view(config, std::cout, /*interactive=*/isatty(1));
//   view.Render(loader.GetMetrics());     // every interval
//   view.PrintSummary(loader.GetMetrics());
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
#include <functional>
#include <map>
#include <ostream>
#include <string>

#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice::cli {

// Rates of the pipeline's output, over an interval or the whole run.
struct Throughput {
  double batches_per_second = 0;
  // Examples batched per second: positions of tensor generators plus rows
  // of batchers.
  double examples_per_second = 0;
  // What one example is: "positions" in an lc0 pipeline (a tensor
  // generator), "clips" in an audio one (an audio decoder), else
  // "examples".
  std::string unit = "examples";
};

// Batches/s (items taken from the output channel) and examples/s of the
// interval metrics, or of the totals when `totals` is true.
Throughput ComputeThroughput(const DataLoaderConfig& config,
                             const DataLoaderMetricsProto& metrics,
                             bool totals);

// Average fill (size / capacity) of each output channel, keyed
// "stage.output", as observed over the snapshots of a run.
using ChannelFill = std::map<std::string, double, std::less<>>;

// Busy time the busiest stage needs over a run before a bottleneck is named.
inline constexpr double kMinBottleneckBusySeconds = 0.5;

// The stage that limits throughput, or why none is named.
struct Bottleneck {
  std::string stage;     // empty when none is named
  std::string why_none;  // set when `stage` is empty
};

// The bottleneck of a whole run, from its totals: the stage with the highest
// load (busy over capacity seconds since start) among those whose input
// channels are not starving them (more than a quarter full on average per
// `fill`, or no input at all). None is named when no such stage was busy for
// kMinBottleneckBusySeconds: a short run has no bottleneck to speak of.
Bottleneck FindBottleneck(const DataLoaderConfig& config,
                          const DataLoaderMetricsProto& metrics,
                          const ChannelFill& fill);

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
  // Totals since start, the bottleneck stage and any error.
  void PrintSummary(const DataLoaderMetricsProto& metrics);

 private:
  void RenderTable(const DataLoaderMetricsProto& metrics);
  void RenderLine(const DataLoaderMetricsProto& metrics);
  void RecordFill(const DataLoaderMetricsProto& metrics);

  const DataLoaderConfig& config_;
  std::ostream& out_;
  const bool interactive_;
  int columns_;
  int lines_drawn_ = 0;
  int64_t last_snapshot_ = -1;
  std::map<std::string, double, std::less<>> fill_sum_;
  int fill_samples_ = 0;
};

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_LIVE_VIEW_H_
