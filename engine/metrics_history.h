// MetricsHistory: a bounded series of a run's metrics snapshots, for a
// picture of the run over its time (the HTML run report,
// bindings/report/html_report.h).
//
//   MetricsHistory history;                      // at most 360 samples
//   history.Add(snapshot);                       // every metrics interval
//   for (const MetricsHistory::Sample& sample : history.Samples()) ...
//
// Promises:
// - Memory is bounded: at most `max_samples` samples (and one being
//   filled) whatever the run's length. When the series is full, each pair
//   of neighbouring samples is merged into one, and from then on each
//   sample covers twice as many snapshots: a long run keeps its whole
//   time, at a coarser step.
// - A sample covers consecutive snapshots: its stage metrics are those of
//   its span (counters and busy seconds summed, gauges such as a channel's
//   size taken at its end; engine/metrics_accumulator.h), its RSS the
//   largest seen in it.
// - Not thread-safe: the owner serializes calls (the pipeline does, under
//   its metrics lock).
#ifndef SLUICE_ENGINE_METRICS_HISTORY_H_
#define SLUICE_ENGINE_METRICS_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "proto/data_loader_metrics.pb.h"

namespace sluice {

class MetricsHistory {
 public:
  // Consecutive snapshots folded together.
  struct Sample {
    // Seconds since Start() at the end of the sample's span.
    double end_seconds = 0;
    // Wall time the sample covers.
    double span_seconds = 0;
    // The largest resident set size seen in the span.
    uint64_t rss_bytes = 0;
    // The span's stage_metrics (interval_seconds = span_seconds,
    // elapsed_seconds = end_seconds; no totals).
    DataLoaderMetricsProto metrics;
  };

  // `max_samples` at least 2.
  explicit MetricsHistory(size_t max_samples = 360);

  // Adds one interval snapshot (its stage_metrics and rss_bytes; totals are
  // ignored).
  void Add(const DataLoaderMetricsProto& snapshot);
  // The samples in time order, the one being filled last.
  std::vector<Sample> Samples() const;
  // Snapshots each full sample covers now (1, 2, 4, ...).
  size_t snapshots_per_sample() const { return stride_; }

 private:
  // Folds `later` into `earlier`.
  static void Merge(const Sample& later, Sample& earlier);

  const size_t max_samples_;
  size_t stride_ = 1;
  std::vector<Sample> samples_;
  std::optional<Sample> pending_;
  size_t pending_snapshots_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_METRICS_HISTORY_H_
