// LiveView: renders pipeline metrics for a person watching a run.
//
//   LiveView view(config, std::cout, /*interactive=*/isatty(1));
//   view.Render(loader.GetMetrics());     // every interval
//   view.PrintSummary(loader.GetMetrics());
//
// Interactive mode redraws one table in place (ANSI cursor movement): a
// header with batches/s, positions/s and elapsed time, then one row per
// stage with its load bar, items/s, output channel fill, drops and errors.
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
  double positions_per_second = 0;
};

// Batches/s (items taken from the output channel) and positions/s (from
// tensor generators) of the interval metrics, or of the totals when
// `totals` is true.
Throughput ComputeThroughput(const DataLoaderConfig& config,
                             const DataLoaderMetricsProto& metrics,
                             bool totals);

// Average fill (size / capacity) of each output channel, keyed
// "stage.output", as observed over the snapshots of a run.
using ChannelFill = std::map<std::string, double, std::less<>>;

// The stage that limits throughput: the highest total load among stages
// whose input channels are not starving them (more than a quarter full on
// average per `fill`, or no input at all). Empty when no stage has metrics.
std::string FindBottleneck(const DataLoaderConfig& config,
                           const DataLoaderMetricsProto& metrics,
                           const ChannelFill& fill);

class LiveView {
 public:
  LiveView(const DataLoaderConfig& config, std::ostream& out, bool interactive);

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
  int lines_drawn_ = 0;
  int64_t last_snapshot_ = -1;
  std::map<std::string, double, std::less<>> fill_sum_;
  int fill_samples_ = 0;
};

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_LIVE_VIEW_H_
