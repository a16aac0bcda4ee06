#include "engine/metrics_accumulator.h"

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
  (*metrics.mutable_skipped())["bad_gzip"] = bad_gzip;
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
  EXPECT_EQ(total.skipped().at("bad_gzip"), 3u);
}

TEST(MetricsAccumulatorTest, MapsMergeByKey) {
  StageMetricProto total;
  StageMetricProto first;
  (*first.mutable_skipped())["a"] = 1;
  StageMetricProto second;
  (*second.mutable_skipped())["b"] = 2;
  (*second.mutable_skipped())["a"] = 3;
  AccumulateMetrics(first, &total);
  AccumulateMetrics(second, &total);
  EXPECT_EQ(total.skipped().size(), 2u);
  EXPECT_EQ(total.skipped().at("a"), 4u);
  EXPECT_EQ(total.skipped().at("b"), 2u);
}

}  // namespace
}  // namespace sluice
