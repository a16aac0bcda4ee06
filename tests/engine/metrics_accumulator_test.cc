#include "engine/metrics_accumulator.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice {
namespace {

StageMetricProto Interval(uint64_t puts, uint64_t size, double busy,
                          double capacity, uint64_t bad_gzip) {
  StageMetricProto metrics;
  metrics.set_name("unpacker");
  metrics.mutable_load()->set_busy_seconds(busy);
  metrics.mutable_load()->set_capacity_seconds(capacity);
  metrics.mutable_load()->set_workers(2);
  SkipCountProto* skip = metrics.add_skipped();
  skip->set_reason("bad_gzip");
  skip->set_count(bad_gzip);
  QueueMetricProto* queue = metrics.add_output_queue_metrics();
  queue->set_name("output");
  queue->set_put_count(puts);
  queue->set_size(size);
  return metrics;
}

TEST(MetricsAccumulatorTest, CountersAddGaugesTakeTheNewestValue) {
  StageMetricProto total;
  AccumulateMetrics(Interval(10, 5, 0.5, 1.0, 1), &total);
  AccumulateMetrics(Interval(7, 3, 1.0, 1.0, 2), &total);
  EXPECT_EQ(total.name(), "unpacker");
  EXPECT_EQ(total.output_queue_metrics(0).put_count(), 17u);
  EXPECT_EQ(total.output_queue_metrics(0).size(), 3u);
  EXPECT_DOUBLE_EQ(total.load().busy_seconds(), 1.5);
  EXPECT_DOUBLE_EQ(total.load().capacity_seconds(), 2.0);
  EXPECT_DOUBLE_EQ(total.load().load(), 0.75);
  EXPECT_EQ(total.load().workers(), 2u);
  EXPECT_EQ(SkippedByReason(total).at("bad_gzip"), 3u);
}

void AddSkip(StageMetricProto& metrics, const std::string& reason,
             uint64_t count) {
  SkipCountProto* skip = metrics.add_skipped();
  skip->set_reason(reason);
  skip->set_count(count);
}

TEST(MetricsAccumulatorTest, KeyedElementsMergeByKeyNotPosition) {
  StageMetricProto total;
  StageMetricProto first;
  AddSkip(first, "a", 1);
  StageMetricProto second;
  AddSkip(second, "b", 2);
  AddSkip(second, "a", 3);
  AccumulateMetrics(first, &total);
  AccumulateMetrics(second, &total);
  EXPECT_EQ(total.skipped_size(), 2);
  EXPECT_EQ(SkippedByReason(total),
            (std::map<std::string, uint64_t>{{"a", 4}, {"b", 2}}));
}

}  // namespace
}  // namespace sluice
