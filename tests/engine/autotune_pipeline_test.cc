// DataLoaderConfig.autotune on whole pipelines (engine/pipeline_autotune.cc):
// the tuner's settings in the metrics, and deterministic output unchanged.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using testing::ParseConfig;

// A CPU-bound map stage behind a bad config (one worker, capacities of
// one), long enough for the tuner to try raises on a loaded machine.
constexpr char kAutotuneBadConfig[] = R"pb(
  worker_threads: 2
  metrics_interval_seconds: 0.25
  stage {
    name: "source"
    counting_source { count: 60000 }
    output { capacity: 1 }
  }
  stage {
    name: "work"
    input: "source"
    pass_through { parallelism: 1 work_nanos_per_item: 20000 }
    output { capacity: 1 }
  }
)pb";

struct LoaderRun {
  std::vector<uint64_t> items;
  DataLoaderMetricsProto metrics;
};

LoaderRun RunToEnd(bool deterministic, bool autotune) {
  DataLoaderConfig config = ParseConfig(kAutotuneBadConfig);
  config.set_deterministic(deterministic);
  config.set_autotune(autotune);
  DataLoader loader(CreateStage);
  loader.AddStages(config.SerializeAsString());
  loader.Start();
  LoaderRun run;
  while (std::optional<uint64_t> item = loader.GetNext<uint64_t>()) {
    run.items.push_back(*item);
  }
  loader.Stop();
  run.metrics = loader.GetMetrics();
  return run;
}

TEST(AutotunePipelineTest, ADeterministicPipelineStaysDeterministic) {
  const LoaderRun off = RunToEnd(/*deterministic=*/true, /*autotune=*/false);
  const LoaderRun on = RunToEnd(/*deterministic=*/true, /*autotune=*/true);
  ASSERT_EQ(off.items.size(), 60000u);
  EXPECT_EQ(on.items, off.items);
  EXPECT_FALSE(off.metrics.has_autotune());
}

TEST(AutotunePipelineTest, TheTunersSettingsAreInTheMetrics) {
  const LoaderRun run = RunToEnd(/*deterministic=*/false, /*autotune=*/true);
  EXPECT_EQ(run.items.size(), 60000u);
  ASSERT_TRUE(run.metrics.has_autotune());
  const AutotuneMetricsProto& autotune = run.metrics.autotune();
  std::vector<std::string> names;
  for (const AutotuneSettingProto& setting : autotune.setting()) {
    names.push_back(setting.stage() + " " + setting.setting());
    EXPECT_GE(setting.chosen(), setting.configured()) << names.back();
    EXPECT_LE(setting.chosen(), setting.max()) << names.back();
  }
  EXPECT_EQ(names, std::vector<std::string>({"source output 'output' capacity",
                                             "work parallelism",
                                             "work output 'output' capacity"}));
  // The most workers the tuner may give a stage: twice the threads, at
  // least 4.
  EXPECT_EQ(autotune.setting(1).max(), 4u);
  EXPECT_LE(autotune.adjustments(), autotune.trials());
}

}  // namespace
}  // namespace sluice
