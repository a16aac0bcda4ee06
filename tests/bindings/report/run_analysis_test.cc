#include "bindings/report/run_analysis.h"

#include <string>
#include <vector>

#include "engine/config_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice::report {
namespace {

using ::testing::HasSubstr;

// files -> decode -> c -> d.
DataLoaderConfig FourStages() {
  return ParseConfigText(R"pb(
                           stage {
                             name: "files"
                             counting_source {}
                           }
                           stage {
                             name: "decode"
                             input: "files"
                             pass_through {}
                           }
                           stage {
                             name: "c"
                             input: "decode"
                             pass_through {}
                           }
                           stage {
                             name: "d"
                             input: "c"
                             pass_through {}
                           }
                         )pb",
                         "four stages")
      .value();
}

// Totals of a run in which `stage` was busy `busy` of `capacity` seconds,
// while its last interval's load (a gauge) says `last_load`.
void AddTotals(DataLoaderMetricsProto& metrics, const std::string& stage,
               double busy, double capacity, double last_load) {
  StageMetricProto* totals = metrics.add_total_stage_metrics();
  totals->set_name(stage);
  totals->mutable_load()->set_busy_seconds(busy);
  totals->mutable_load()->set_capacity_seconds(capacity);
  totals->mutable_load()->set_load(last_load);
}

TEST(FindBottleneckTest, ComesFromTheRunsTotalsNotTheLastInterval) {
  DataLoaderMetricsProto metrics;
  metrics.set_elapsed_seconds(10);
  AddTotals(metrics, "files", 1, 10, /*last_load=*/1.0);
  AddTotals(metrics, "decode", 9, 10, /*last_load=*/0.1);
  AddTotals(metrics, "c", 4, 10, 0.5);
  const Bottleneck bottleneck = FindBottleneck(FourStages(), metrics, {});
  EXPECT_EQ(bottleneck.stage, "decode");
}

TEST(FindBottleneckTest, AStarvedStageIsNotTheBottleneck) {
  DataLoaderMetricsProto metrics;
  AddTotals(metrics, "files", 2, 10, 0.2);
  AddTotals(metrics, "c", 9, 10, 0.9);
  const ChannelFill fill = {{"decode.output", 0.05}};
  const Bottleneck bottleneck = FindBottleneck(FourStages(), metrics, fill);
  EXPECT_EQ(bottleneck.stage, "files");
  // The evidence says why c was passed over.
  const std::vector<StageEvidence> evidence =
      GatherEvidence(FourStages(), metrics, fill);
  ASSERT_EQ(evidence.size(), 2);
  EXPECT_EQ(evidence[1].stage, "c");
  EXPECT_TRUE(evidence[1].starved);
  EXPECT_DOUBLE_EQ(evidence[1].input_fill.value(), 0.05);
  EXPECT_DOUBLE_EQ(evidence[1].run_load, 0.9);
  EXPECT_FALSE(evidence[0].input_fill.has_value());
}

TEST(FindBottleneckTest, NoneNamedForARunTooShortToHaveOne) {
  DataLoaderMetricsProto metrics;
  metrics.set_elapsed_seconds(0.02);
  AddTotals(metrics, "files", 0.001, 0.02, /*last_load=*/0.9);
  AddTotals(metrics, "c", 0.004, 0.02, 0.2);
  const Bottleneck bottleneck = FindBottleneck(FourStages(), metrics, {});
  EXPECT_EQ(bottleneck.stage, "");
  EXPECT_THAT(bottleneck.why_none, HasSubstr("too short"));
  EXPECT_THAT(bottleneck.why_none, HasSubstr("c"));
}

TEST(AverageChannelFillTest, AveragesEachChannelOverTheSamples) {
  std::vector<MetricsHistory::Sample> history(4);
  for (int i = 0; i < 4; ++i) {
    StageMetricProto* stage = history[i].metrics.add_stage_metrics();
    stage->set_name("decode");
    QueueMetricProto* queue = stage->add_output_queue_metrics();
    queue->set_name("output");
    queue->set_capacity(100);
    queue->set_size(10 * i);  // 0, 10, 20, 30 of 100
  }
  const ChannelFill fill = AverageChannelFill(history);
  ASSERT_TRUE(fill.contains("decode.output"));
  EXPECT_DOUBLE_EQ(fill.at("decode.output"), 0.15);
}

TEST(MemoryBudgetLineTest, NamesTheBudgetThePlanAndTheLoweredSettings) {
  DataLoaderMetricsProto metrics;
  EXPECT_EQ(MemoryBudgetLine(metrics), "");
  MemoryBudgetMetricsProto& plan = *metrics.mutable_memory_budget();
  plan.set_budget_bytes(200 << 20);
  plan.set_planned_bytes(199 << 20);
  plan.set_configured_bytes(500 << 20);
  plan.set_minimum_bytes(100 << 20);
  MemorySettingProto& kept = *plan.add_setting();
  kept.set_stage("tensors");
  kept.set_setting("tensor_generator.parallelism");
  kept.set_configured(2);
  kept.set_planned(2);
  EXPECT_EQ(MemoryBudgetLine(metrics),
            "memory budget 200.0 MiB: planned 199.0 MiB (configured 500.0 "
            "MiB, minimum 100.0 MiB); nothing lowered");
  MemorySettingProto& lowered = *plan.add_setting();
  lowered.set_stage("sampler");
  lowered.set_setting("shuffling_frame_sampler.reservoir_size");
  lowered.set_configured(200000);
  lowered.set_planned(20000);
  EXPECT_THAT(MemoryBudgetLine(metrics),
              HasSubstr("; lowered: sampler "
                        "shuffling_frame_sampler.reservoir_size 200000 -> "
                        "20000"));
}

TEST(AutotuneLineTest, NamesTheStateAndTheRaisedSettings) {
  DataLoaderMetricsProto metrics;
  EXPECT_EQ(AutotuneLine(metrics), "");
  AutotuneMetricsProto& tuner = *metrics.mutable_autotune();
  AutotuneSettingProto& kept = *tuner.add_setting();
  kept.set_stage("unpacker");
  kept.set_setting("parallelism");
  kept.set_configured(2);
  kept.set_chosen(2);
  EXPECT_EQ(AutotuneLine(metrics),
            "autotune (tuning, 0 of 0 raises kept): nothing raised");
  AutotuneSettingProto& raised = *tuner.add_setting();
  raised.set_stage("unpacker");
  raised.set_setting("output 'output' capacity");
  raised.set_configured(1);
  raised.set_chosen(64);
  tuner.set_trials(4);
  tuner.set_adjustments(3);
  tuner.set_settled(true);
  EXPECT_EQ(AutotuneLine(metrics),
            "autotune (settled, 3 of 4 raises kept): unpacker output "
            "'output' capacity 1 -> 64");
}

}  // namespace
}  // namespace sluice::report
