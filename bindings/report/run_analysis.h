// What a run's metrics say, for a person: the pipeline's throughput, each
// channel's average fill and the stage that limits the run (its
// bottleneck), with the evidence for it. Shared by the CLI's summary
// (bindings/cli/live_view.h) and the HTML run report (html_report.h), so
// that both name the same bottleneck.
//
//   const ChannelFill fill = AverageChannelFill(pipeline.GetHistory());
//   const Bottleneck bottleneck =
//       FindBottleneck(config, pipeline.GetMetrics(), fill);
#ifndef SLUICE_BINDINGS_REPORT_RUN_ANALYSIS_H_
#define SLUICE_BINDINGS_REPORT_RUN_ANALYSIS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/metrics_history.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice::report {

// The metrics of the stage called `name` among `stages`, or nullptr.
const StageMetricProto* FindStage(
    const google::protobuf::RepeatedPtrField<StageMetricProto>& stages,
    absl::string_view name);

// Rates of the pipeline's output, over an interval or the whole run.
struct Throughput {
  // Items taken from the output channel over the span.
  uint64_t batches = 0;
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

// The average fill of each channel over `history` (each sample's fill at
// its end, every sample weighing the same).
ChannelFill AverageChannelFill(
    const std::vector<MetricsHistory::Sample>& history);

// Busy time the busiest stage needs over a run before a bottleneck is named.
inline constexpr double kMinBottleneckBusySeconds = 0.5;

// One stage as the bottleneck search saw it.
struct StageEvidence {
  std::string stage;
  std::string type;
  // Busy over capacity seconds since start, and the busy seconds.
  double run_load = 0;
  double busy_seconds = 0;
  // The least average fill among its input channels; unset when it has
  // no input or none was observed.
  std::optional<double> input_fill;
  // Its inputs were less than a quarter full on average: it waited for
  // work, so it does not limit the run.
  bool starved = false;
  // Busy at least kMinBottleneckBusySeconds, with capacity: a candidate.
  bool busy_enough = false;
};

// The evidence for every stage of `config` that reported metrics, in
// config order.
std::vector<StageEvidence> GatherEvidence(const DataLoaderConfig& config,
                                          const DataLoaderMetricsProto& metrics,
                                          const ChannelFill& fill);

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

// The memory budget's plan in one line (DataLoaderConfig.memory_budget_bytes):
// "memory budget 200.0 MiB: planned 199.9 MiB (configured 543.4 MiB,
// minimum 186.5 MiB); lowered: sampler shuffling_frame_sampler.reservoir_size
// 200000 -> 20000, ..." ("nothing lowered" when the settings fit); empty
// without a budget.
std::string MemoryBudgetLine(const DataLoaderMetricsProto& metrics);

// The autotuner's choices in one line (DataLoaderConfig.autotune):
// "autotune (settled, 3 of 5 raises kept): unpacker parallelism 1 -> 2,
// unpacker output 'output' capacity 1 -> 64" ("tuning" while it is not
// settled; "nothing raised" when every setting is as configured); empty
// without autotune.
std::string AutotuneLine(const DataLoaderMetricsProto& metrics);

}  // namespace sluice::report

#endif  // SLUICE_BINDINGS_REPORT_RUN_ANALYSIS_H_
