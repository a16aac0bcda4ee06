#include "engine/memory_budget.h"

#include <cstdint>
#include <string>
#include <vector>

#include "engine/memory_model.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kKiB = uint64_t{1} << 10;

// base 10 MiB
// + queue    output capacity 100 (least 1)    x 1 MiB
// + shuffle  reservoir size 1000 (least 100)  x 100 KiB
// + workers  parallelism 4 (least 1)          x 10 MiB
// + thread buffers, fixed 2                   x 1 MiB
// configured: 10 + 100 + 97.65625 + 40 + 2 MiB; least: 10 + 1 + 9.765625
// + 10 + 2 MiB.
MemoryModel SampleModel() {
  std::vector<MemoryTerm> terms = {
      {.stage = "queue",
       .part = "output",
       .what = "items queued in output 'output' (int)",
       .knob = MemoryKnob::kCapacity,
       .field = "capacity",
       .output = "output",
       .count = 100,
       .min_count = 1,
       .bytes_each = kMiB},
      {.stage = "shuffle",
       .part = "reservoir",
       .what = "items in the reservoir",
       .knob = MemoryKnob::kReservoir,
       .field = "size",
       .count = 1000,
       .min_count = 100,
       .bytes_each = 100 * kKiB,
       .scaled_with = {"min_fill"}},
      {.stage = "work",
       .part = "workers",
       .what = "buffers per worker",
       .knob = MemoryKnob::kParallelism,
       .field = "parallelism",
       .count = 4,
       .min_count = 1,
       .bytes_each = 10 * kMiB},
      {.stage = "work",
       .part = "thread_buffers",
       .what = "a buffer per worker thread",
       .count = 2,
       .min_count = 2,
       .bytes_each = kMiB},
  };
  return MemoryModel(10 * kMiB, 2, std::move(terms),
                     {{"queue", "pass_through"},
                      {"shuffle", "shuffle_buffer"},
                      {"work", "pass_through"}});
}

// The planned count of the term `part` of `stage` ("output" is the
// capacity of its output; fixed terms keep their count).
uint64_t CountOf(const MemoryModel& model, const MemoryPlan& plan,
                 const std::string& key) {
  const size_t dot = key.find('.');
  const std::string stage = key.substr(0, dot);
  const std::string part = key.substr(dot + 1);
  for (const MemoryTerm& term : model.terms()) {
    if (term.stage != stage || term.part != part) continue;
    for (const MemorySetting& setting : plan.settings) {
      if (setting.stage == stage && setting.field == term.field &&
          setting.output == term.output) {
        return setting.to;
      }
    }
    return term.count;
  }
  ADD_FAILURE() << "no term " << key;
  return 0;
}

TEST(MemoryModelTest, SumsTheTermsAtTheirCountsAndAtTheirLeast) {
  const MemoryModel model = SampleModel();
  EXPECT_EQ(model.Bytes(),
            10 * kMiB + 100 * kMiB + 1000 * 100 * kKiB + 40 * kMiB + 2 * kMiB);
  EXPECT_EQ(model.MinimumBytes(),
            10 * kMiB + kMiB + 100 * 100 * kKiB + 10 * kMiB + 2 * kMiB);
}

TEST(MemoryBudgetTest, ABudgetTheSettingsFitChangesNothing) {
  const MemoryModel model = SampleModel();
  for (uint64_t budget : {model.Bytes(), 10 * model.Bytes()}) {
    absl::StatusOr<MemoryPlan> plan = PlanMemory(model, budget);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_FALSE(plan->ChangesSomething());
    EXPECT_EQ(plan->planned_bytes, model.Bytes());
    for (const MemorySetting& setting : plan->settings) {
      EXPECT_EQ(setting.to, setting.from) << setting.setting_name;
    }
    DataLoaderConfig config;
    config.add_stage()->set_name("queue");
    const std::string before = config.SerializeAsString();
    ASSERT_TRUE(ApplyMemoryPlan(*plan, &config).ok());
    EXPECT_EQ(config.SerializeAsString(), before);
  }
}

TEST(MemoryBudgetTest, ABudgetBelowTheMinimumIsRefusedWithTheArithmetic) {
  const MemoryModel model = SampleModel();
  absl::StatusOr<MemoryPlan> plan = PlanMemory(model, model.MinimumBytes() - 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(plan.status().message());
  EXPECT_THAT(message, HasSubstr("field 'memory_budget_bytes' (" +
                                 std::to_string(model.MinimumBytes() - 1)));
  EXPECT_THAT(message,
              HasSubstr("minimum of " + std::to_string(model.MinimumBytes()) +
                        " bytes (32.8 MiB)"));
  EXPECT_THAT(message, HasSubstr("engine base (2 worker threads) = 10.0 MiB"));
  EXPECT_THAT(message,
              HasSubstr("stage 'work' workers, buffers per worker "
                        "(pass_through.parallelism at least 1; configured "
                        "4): 1 x 10.0 MiB = 10.0 MiB"));
  EXPECT_THAT(message, HasSubstr("stage 'shuffle' reservoir, items in the "
                                 "reservoir (shuffle_buffer.size at least "
                                 "100; configured 1000): 100 x 100.0 KiB = "
                                 "9.8 MiB"));
  EXPECT_THAT(message, HasSubstr("stage 'work' thread_buffers, a buffer per "
                                 "worker thread: 2 x 1.0 MiB = 2.0 MiB"));
  EXPECT_THAT(message,
              HasSubstr("stage 'queue' output, items queued in output "
                        "'output' (int) (output 'output' capacity at least "
                        "1; configured 100): 1 x 1.0 MiB = 1.0 MiB"));
  EXPECT_THAT(message, HasSubstr("as configured need 249.7 MiB"));
  EXPECT_THAT(message, HasSubstr("Raise memory_budget_bytes to at least " +
                                 std::to_string(model.MinimumBytes())));
}

TEST(MemoryBudgetTest, ThePlanIsAFunctionOfTheModelAndTheBudget) {
  const MemoryModel model = SampleModel();
  for (uint64_t budget = model.MinimumBytes(); budget <= model.Bytes();
       budget += 7 * kMiB + 12345) {
    absl::StatusOr<MemoryPlan> first = PlanMemory(model, budget);
    absl::StatusOr<MemoryPlan> second = PlanMemory(SampleModel(), budget);
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_LE(first->planned_bytes, budget);
    EXPECT_EQ(first->ToProto().SerializeAsString(),
              second->ToProto().SerializeAsString());
  }
}

TEST(MemoryBudgetTest, ExactlyTheMinimumPutsEverySettingAtItsLeast) {
  const MemoryModel model = SampleModel();
  absl::StatusOr<MemoryPlan> plan = PlanMemory(model, model.MinimumBytes());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->planned_bytes, model.MinimumBytes());
  EXPECT_EQ(CountOf(model, *plan, "queue.output"), 1u);
  EXPECT_EQ(CountOf(model, *plan, "shuffle.reservoir"), 100u);
  EXPECT_EQ(CountOf(model, *plan, "work.workers"), 1u);
  EXPECT_EQ(CountOf(model, *plan, "work.thread_buffers"), 2u);
}

TEST(MemoryBudgetTest, LowersChannelsFirstThenReservoirsThenParallelism) {
  const MemoryModel model = SampleModel();
  // 50 MiB less: the queue alone gives it (100 -> 50 items).
  absl::StatusOr<MemoryPlan> plan =
      PlanMemory(model, model.Bytes() - 50 * kMiB);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_LE(plan->planned_bytes, model.Bytes() - 50 * kMiB);
  EXPECT_EQ(CountOf(model, *plan, "queue.output"), 50u);
  EXPECT_EQ(CountOf(model, *plan, "shuffle.reservoir"), 1000u);
  EXPECT_EQ(CountOf(model, *plan, "work.workers"), 4u);
  // 150 MiB less: the queue at its least, the reservoir lowered, the
  // workers untouched.
  plan = PlanMemory(model, model.Bytes() - 150 * kMiB);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_LE(plan->planned_bytes, model.Bytes() - 150 * kMiB);
  EXPECT_GT(plan->planned_bytes, model.Bytes() - 150 * kMiB - kMiB);
  EXPECT_EQ(CountOf(model, *plan, "queue.output"), 1u);
  EXPECT_LT(CountOf(model, *plan, "shuffle.reservoir"), 1000u);
  EXPECT_GT(CountOf(model, *plan, "shuffle.reservoir"), 100u);
  EXPECT_EQ(CountOf(model, *plan, "work.workers"), 4u);
  // 20 MiB above the minimum: only parallelism is left to give.
  plan = PlanMemory(model, model.MinimumBytes() + 20 * kMiB);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(CountOf(model, *plan, "shuffle.reservoir"), 100u);
  EXPECT_EQ(CountOf(model, *plan, "work.workers"), 3u);
}

TEST(MemoryBudgetTest, TheConfigGetsThePlannedSettingsAndAScaledMinFill) {
  DataLoaderConfig config;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        stage {
          name: "queue"
          pass_through {}
        }
        stage {
          name: "shuffle"
          input: "queue"
          shuffle_buffer { size: 1000 min_fill: 800 }
        }
        stage {
          name: "work"
          input: "shuffle"
          output { name: "output" capacity: 7 }
          pass_through { parallelism: 4 }
        }
      )pb",
      &config));
  const MemoryModel model = SampleModel();
  absl::StatusOr<MemoryPlan> plan = PlanMemory(model, model.MinimumBytes());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(ApplyMemoryPlan(*plan, &config).ok());
  ASSERT_EQ(config.stage(0).output_size(), 1);
  EXPECT_EQ(config.stage(0).output(0).name(), "output");
  EXPECT_EQ(config.stage(0).output(0).capacity(), 1u);
  EXPECT_EQ(config.stage(1).shuffle_buffer().size(), 100u);
  EXPECT_EQ(config.stage(1).shuffle_buffer().min_fill(), 80u);
  EXPECT_EQ(config.stage(2).pass_through().parallelism(), 1u);
  EXPECT_EQ(config.stage(2).output(0).capacity(), 7u);  // not in the plan

  MemoryPlan unknown;
  unknown.settings.push_back({.stage = "work",
                              .knob = MemoryKnob::kParallelism,
                              .field = "no_such_field",
                              .from = 4,
                              .to = 1});
  EXPECT_THAT(std::string(ApplyMemoryPlan(unknown, &config).message()),
              HasSubstr("stage 'work' has no field 'no_such_field'"));
}

}  // namespace
}  // namespace sluice
