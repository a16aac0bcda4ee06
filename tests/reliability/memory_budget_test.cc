// DataLoaderConfig.memory_budget_bytes on whole lc0 and audio pipelines
// (tests/reliability/checkpoint_workloads.h; docs/tuning.md): a budget
// below the minimum is refused with the arithmetic, a budget of exactly the
// minimum or in between runs with every planned setting reported in the
// metrics and the planned model within the budget, a budget the settings
// fit changes nothing (the same batches), and a planned deterministic
// pipeline is as deterministic as any, and refuses a plan that would make
// its batches depend on the machine's CPUs.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "engine/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/reliability/batch_hashes.h"
#include "tests/reliability/checkpoint_workloads.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::sluice::testing::CheckpointWorkload;
using ::sluice::testing::Pass;
using ::testing::AllOf;
using ::testing::HasSubstr;

// The plan of `config` for its budget (nothing started), or the error of
// Configure.
absl::StatusOr<MemoryBudgetMetricsProto> PlanOf(
    const DataLoaderConfig& config) {
  Pipeline pipeline(CreateStage);
  if (absl::Status status = pipeline.Configure(config); !status.ok()) {
    return status;
  }
  return pipeline.GetMetrics().memory_budget();
}

// The planned value of `setting` of stage `stage`.
uint64_t Planned(const MemoryBudgetMetricsProto& plan, const std::string& stage,
                 const std::string& setting) {
  for (const MemorySettingProto& entry : plan.setting()) {
    if (entry.stage() == stage && entry.setting() == setting) {
      return entry.planned();
    }
  }
  ADD_FAILURE() << "no setting " << setting << " of stage " << stage;
  return 0;
}

class MemoryBudgetTest : public ::testing::TestWithParam<CheckpointWorkload> {
 protected:
  void SetUp() override {
    GetParam().write(dir_.path());
    config_ = GetParam().config(dir_.path(), Pass::kTrain);
    // Deterministic: a plan that lowers the reservoir needs them given.
    config_.set_worker_threads(2);
    DataLoaderConfig unlimited = config_;
    unlimited.set_memory_budget_bytes(uint64_t{1} << 50);
    absl::StatusOr<MemoryBudgetMetricsProto> plan = PlanOf(unlimited);
    ASSERT_TRUE(plan.ok()) << plan.status();
    configured_ = plan->configured_bytes();
    minimum_ = plan->minimum_bytes();
    ASSERT_LT(minimum_, configured_);
  }

  // The config with `budget`.
  DataLoaderConfig WithBudget(uint64_t budget) const {
    DataLoaderConfig config = config_;
    config.set_memory_budget_bytes(budget);
    return config;
  }

  // The reservoir stage of the workload and its size setting.
  std::pair<std::string, std::string> Reservoir() const {
    return GetParam().name == "lc0"
               ? std::pair<std::string, std::string>(
                     "sampler", "shuffling_frame_sampler.reservoir_size")
               : std::pair<std::string, std::string>("shuffle",
                                                     "shuffle_buffer.size");
  }

  testing::TempDir dir_;
  DataLoaderConfig config_;
  uint64_t configured_ = 0;
  uint64_t minimum_ = 0;
};

TEST_P(MemoryBudgetTest, ABudgetBelowTheMinimumIsRefusedWithTheArithmetic) {
  absl::StatusOr<MemoryBudgetMetricsProto> plan =
      PlanOf(WithBudget(minimum_ - 1));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(plan.status().message());
  EXPECT_THAT(message, HasSubstr("field 'memory_budget_bytes' (" +
                                 std::to_string(minimum_ - 1)));
  EXPECT_THAT(message, HasSubstr("minimum of " + std::to_string(minimum_)));
  EXPECT_THAT(message, HasSubstr("engine base (2 worker threads)"));
  const auto [stage, setting] = Reservoir();
  EXPECT_THAT(message, HasSubstr("stage '" + stage + "' reservoir"));
  EXPECT_THAT(message, HasSubstr("(" + setting + " at least "));
  EXPECT_THAT(message, HasSubstr("output 'output' capacity at least 1"));
  // The loader's facade throws it at construction.
  DataLoader loader(CreateStage);
  EXPECT_THROW(loader.Configure(WithBudget(minimum_ - 1)), std::exception);
}

TEST_P(MemoryBudgetTest, SmallBudgetsRunWithTheirPlanInTheMetrics) {
  for (const uint64_t budget :
       {minimum_, minimum_ + (configured_ - minimum_) / 3}) {
    DataLoader loader(CreateStage);
    loader.Configure(WithBudget(budget));
    loader.Start();
    size_t batches = 0;
    while (batches < 8 && loader.GetNext<TypedBatch>().has_value()) ++batches;
    EXPECT_EQ(batches, 8u);
    const DataLoaderMetricsProto metrics = loader.GetMetrics();
    loader.Stop();
    EXPECT_EQ(metrics.error(), "");
    const MemoryBudgetMetricsProto& plan = metrics.memory_budget();
    EXPECT_EQ(plan.budget_bytes(), budget);
    EXPECT_EQ(plan.configured_bytes(), configured_);
    EXPECT_EQ(plan.minimum_bytes(), minimum_);
    EXPECT_LE(plan.planned_bytes(), budget);
    EXPECT_LT(plan.planned_bytes(), configured_);
    uint64_t lowered = 0;
    for (const MemorySettingProto& setting : plan.setting()) {
      EXPECT_LE(setting.planned(), setting.configured()) << setting.setting();
      EXPECT_GE(setting.planned(), 1u) << setting.setting();
      if (setting.planned() < setting.configured()) ++lowered;
    }
    EXPECT_GT(lowered, 0u);
    if (budget == minimum_) {
      EXPECT_EQ(plan.planned_bytes(), minimum_);
      const auto [stage, setting] = Reservoir();
      // Lowered to a tenth.
      EXPECT_EQ(
          Planned(plan, stage, setting),
          GetParam().name == "lc0"
              ? config_.stage(4).shuffling_frame_sampler().reservoir_size() / 10
              : config_.stage(5).shuffle_buffer().size() / 10);
      EXPECT_EQ(Planned(plan, stage, "output 'output' capacity"), 1u);
    }
  }
}

TEST_P(MemoryBudgetTest, ABudgetTheSettingsFitChangesNothing) {
  const std::vector<uint64_t> reference = BatchHashes(config_, 6);
  ASSERT_EQ(reference.size(), 6u);
  EXPECT_EQ(BatchHashes(WithBudget(configured_), 6), reference);
  absl::StatusOr<MemoryBudgetMetricsProto> plan =
      PlanOf(WithBudget(configured_));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->planned_bytes(), configured_);
  for (const MemorySettingProto& setting : plan->setting()) {
    EXPECT_EQ(setting.planned(), setting.configured()) << setting.setting();
  }
}

TEST_P(MemoryBudgetTest, APlannedDeterministicPipelineStaysDeterministic) {
  const DataLoaderConfig config =
      WithBudget(minimum_ + (configured_ - minimum_) / 2);
  const std::vector<uint64_t> first = BatchHashes(config, 6);
  ASSERT_EQ(first.size(), 6u);
  EXPECT_EQ(BatchHashes(config, 6), first);
}

// With worker_threads 0 (the machine's CPUs) the planned reservoir size,
// and so a deterministic pipeline's batches, would depend on the machine:
// refused naming both fields and the reservoir. A budget that lowers no
// reservoir, or worker_threads given, is fine.
TEST_P(MemoryBudgetTest,
       ADeterministicPlanLoweringAReservoirNeedsWorkerThreads) {
  DataLoaderConfig config = WithBudget(minimum_);
  config.set_worker_threads(0);
  const auto [stage, setting] = Reservoir();
  absl::StatusOr<MemoryBudgetMetricsProto> refused = PlanOf(config);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_THAT(
      refused.status().message(),
      AllOf(HasSubstr("deterministic"), HasSubstr("memory_budget_bytes"),
            HasSubstr("field 'worker_threads' 0"),
            HasSubstr("stage '" + stage + "' " + setting)));
  config.set_worker_threads(2);
  EXPECT_TRUE(PlanOf(config).ok());
  DataLoaderConfig unlowered = WithBudget(configured_);
  unlowered.set_worker_threads(0);
  EXPECT_TRUE(PlanOf(unlowered).ok());
  unlowered = WithBudget(minimum_);
  unlowered.set_worker_threads(0);
  unlowered.set_deterministic(false);
  EXPECT_TRUE(PlanOf(unlowered).ok());
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, MemoryBudgetTest,
    ::testing::ValuesIn(testing::CheckpointWorkloads()),
    [](const ::testing::TestParamInfo<CheckpointWorkload>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace sluice
