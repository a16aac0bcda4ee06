#include "engine/metrics_history.h"

#include <algorithm>
#include <utility>

#include "engine/metrics_accumulator.h"

namespace sluice {

MetricsHistory::MetricsHistory(size_t max_samples)
    : max_samples_(std::max<size_t>(max_samples, 2)) {}

void MetricsHistory::Merge(const Sample& later, Sample& earlier) {
  AccumulateMetrics(later.metrics, &earlier.metrics);
  earlier.span_seconds += later.span_seconds;
  earlier.end_seconds = later.end_seconds;
  earlier.rss_bytes = std::max(earlier.rss_bytes, later.rss_bytes);
  earlier.metrics.set_interval_seconds(earlier.span_seconds);
  earlier.metrics.set_elapsed_seconds(earlier.end_seconds);
}

void MetricsHistory::Add(const DataLoaderMetricsProto& snapshot) {
  Sample sample;
  sample.end_seconds = snapshot.elapsed_seconds();
  sample.span_seconds = snapshot.interval_seconds();
  sample.rss_bytes = snapshot.rss_bytes();
  sample.metrics = snapshot;
  sample.metrics.clear_total_stage_metrics();
  if (pending_.has_value()) {
    Merge(sample, *pending_);
  } else {
    pending_ = std::move(sample);
  }
  if (++pending_snapshots_ < stride_) return;
  samples_.push_back(std::move(*pending_));
  pending_.reset();
  pending_snapshots_ = 0;
  if (samples_.size() < max_samples_) return;
  // Full: fold each pair into one sample of twice the span.
  size_t kept = 0;
  for (size_t i = 0; i + 1 < samples_.size(); i += 2) {
    Merge(samples_[i + 1], samples_[i]);
    samples_[kept++] = std::move(samples_[i]);
  }
  if (samples_.size() % 2 == 1) {
    // The odd one out becomes the sample being filled.
    pending_ = std::move(samples_.back());
    pending_snapshots_ = stride_;
  }
  samples_.resize(kept);
  stride_ *= 2;
}

std::vector<MetricsHistory::Sample> MetricsHistory::Samples() const {
  std::vector<Sample> samples = samples_;
  if (pending_.has_value()) samples.push_back(*pending_);
  return samples;
}

}  // namespace sluice
