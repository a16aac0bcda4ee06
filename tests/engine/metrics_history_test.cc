#include "engine/metrics_history.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

// The snapshot of interval `index` (1 s each): stage "a" put 10 items and
// was busy 0.5 s; its channel holds `index` items now; the process's RSS
// is `rss_bytes`.
DataLoaderMetricsProto Snapshot(int index, uint64_t rss_bytes) {
  DataLoaderMetricsProto snapshot;
  snapshot.set_rss_bytes(rss_bytes);
  snapshot.set_interval_seconds(1.0);
  snapshot.set_elapsed_seconds(index + 1.0);
  StageMetricProto* stage = snapshot.add_stage_metrics();
  stage->set_name("a");
  stage->mutable_load()->set_busy_seconds(0.5);
  stage->mutable_load()->set_capacity_seconds(1.0);
  stage->mutable_load()->set_load(0.5);
  QueueMetricProto* queue = stage->add_output_queue_metrics();
  queue->set_name("output");
  queue->set_put_count(10);
  queue->set_size(index);
  queue->set_capacity(1000);
  *snapshot.add_total_stage_metrics() = *stage;
  return snapshot;
}

TEST(MetricsHistoryTest, KeepsEverySnapshotWhileThereIsRoom) {
  MetricsHistory history(8);
  for (int i = 0; i < 5; ++i) history.Add(Snapshot(i, 100 + i));
  const std::vector<MetricsHistory::Sample> samples = history.Samples();
  ASSERT_EQ(samples.size(), 5);
  EXPECT_EQ(history.snapshots_per_sample(), 1);
  for (int i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(samples[i].end_seconds, i + 1.0);
    EXPECT_DOUBLE_EQ(samples[i].span_seconds, 1.0);
    EXPECT_EQ(samples[i].rss_bytes, 100u + i);
    EXPECT_EQ(samples[i].metrics.total_stage_metrics_size(), 0);
    EXPECT_EQ(
        samples[i].metrics.stage_metrics(0).output_queue_metrics(0).size(),
        static_cast<uint64_t>(i));
  }
}

TEST(MetricsHistoryTest, ALongRunIsMergedIntoBoundedSamplesOverItsWholeTime) {
  constexpr int kSnapshots = 1000;
  MetricsHistory history(16);
  for (int i = 0; i < kSnapshots; ++i) history.Add(Snapshot(i, i % 7));
  const std::vector<MetricsHistory::Sample> samples = history.Samples();
  ASSERT_LE(samples.size(), 17);  // 16 and the one being filled
  ASSERT_GE(samples.size(), 8);
  double span = 0;
  uint64_t put = 0;
  double busy = 0;
  double previous_end = 0;
  for (const MetricsHistory::Sample& sample : samples) {
    EXPECT_GT(sample.end_seconds, previous_end);
    EXPECT_NEAR(sample.end_seconds - previous_end, sample.span_seconds, 1e-9);
    previous_end = sample.end_seconds;
    span += sample.span_seconds;
    const StageMetricProto& stage = sample.metrics.stage_metrics(0);
    put += stage.output_queue_metrics(0).put_count();
    busy += stage.load().busy_seconds();
    // Load is recomputed from the summed seconds, gauges come from the end.
    EXPECT_NEAR(stage.load().load(), 0.5, 1e-9);
    EXPECT_EQ(stage.output_queue_metrics(0).size(),
              static_cast<uint64_t>(sample.end_seconds - 1));
    EXPECT_EQ(sample.rss_bytes,
              sample.span_seconds >= 7 ? 6u : sample.rss_bytes);
  }
  // Nothing is lost: the samples cover every snapshot.
  EXPECT_DOUBLE_EQ(span, kSnapshots);
  EXPECT_DOUBLE_EQ(previous_end, kSnapshots);
  EXPECT_EQ(put, 10u * kSnapshots);
  EXPECT_DOUBLE_EQ(busy, 0.5 * kSnapshots);
  EXPECT_GE(history.snapshots_per_sample(), kSnapshots / 17);
}

}  // namespace
}  // namespace sluice
