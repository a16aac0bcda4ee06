// DataLoaderConfig.autotune on whole lc0 and audio pipelines
// (tests/reliability/checkpoint_workloads.h; docs/tuning.md): the tuner
// runs with every setting it may raise in the metrics, and a deterministic
// pipeline gives the same batches with autotune on and off, from a config
// whose parallelism and capacities are all 1 (where the tuner has the most
// to raise).
#include <cstdint>
#include <vector>

#include "engine/data_loader.h"
#include "engine/stage_config_edit.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/reliability/batch_hashes.h"
#include "tests/reliability/checkpoint_workloads.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::sluice::testing::CheckpointWorkload;
using ::sluice::testing::Pass;

class AutotuneTest : public ::testing::TestWithParam<CheckpointWorkload> {
 protected:
  void SetUp() override {
    GetParam().write(dir_.path());
    config_ = GetParam().config(dir_.path(), Pass::kTrain);
    // Every output capacity 1 (the tuner's capacities start there).
    for (StageConfig& stage : *config_.mutable_stage()) {
      SetOutputCapacity(stage, "output", 1);
    }
  }

  testing::TempDir dir_;
  DataLoaderConfig config_;
};

TEST_P(AutotuneTest, ADeterministicPipelineGivesTheSameBatchesWithAutotune) {
  ASSERT_TRUE(config_.deterministic());
  DataLoaderConfig tuned = config_;
  tuned.set_autotune(true);
  const std::vector<uint64_t> without = BatchHashes(config_, 40);
  ASSERT_EQ(without.size(), 40u);
  EXPECT_EQ(BatchHashes(tuned, 40), without);
}

TEST_P(AutotuneTest, EverySettingTheTunerMayRaiseIsInTheMetrics) {
  DataLoaderConfig tuned = config_;
  tuned.set_autotune(true);
  DataLoader loader(CreateStage);
  loader.Configure(tuned);
  loader.Start();
  loader.Stop();
  const DataLoaderMetricsProto metrics = loader.GetMetrics();
  ASSERT_TRUE(metrics.has_autotune());
  bool parallelism = false;
  for (const AutotuneSettingProto& setting : metrics.autotune().setting()) {
    EXPECT_GE(setting.chosen(), setting.configured()) << setting.setting();
    EXPECT_GT(setting.max(), setting.configured()) << setting.setting();
    parallelism |= setting.setting() == "parallelism";
  }
  EXPECT_TRUE(parallelism);
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, AutotuneTest,
    ::testing::ValuesIn(testing::CheckpointWorkloads()),
    [](const ::testing::TestParamInfo<CheckpointWorkload>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace sluice
