#include "engine/pipeline.h"

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/element_type.h"
#include "engine/worker_placement.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ParseConfig;

// A source of strings, to provoke element type mismatches.
class StringSource final : public Stage {
 public:
  explicit StringSource(const StageContext& context)
      : Stage(context), output_(AddOutput<std::string>()) {}
  void Start(const StageRuntime& runtime) override {
    SpawnWorkers(runtime, 1, [](int) -> asio::awaitable<void> { co_return; });
  }

 private:
  Channel<std::string>* output_;
};

// The default factory, except that stages named "strings..." are
// StringSources (whatever their config says).
absl::StatusOr<std::unique_ptr<Stage>> TestFactory(
    const StageContext& context) {
  if (context.name().rfind("strings", 0) == 0) {
    return std::unique_ptr<Stage>(new StringSource(context));
  }
  return CreateStage(context);
}

absl::Status Configure(const std::string& text) {
  Pipeline pipeline(TestFactory);
  return pipeline.Configure(ParseConfig(text));
}

TEST(PipelineConfigTest, AcceptsAWellFormedPipeline) {
  EXPECT_TRUE(Configure(R"pb(
                stage {
                  name: "source"
                  counting_source { count: 10 }
                }
                stage {
                  name: "pass"
                  input: "source"
                  pass_through {}
                }
                output: "numbers:pass.output"
              )pb")
                  .ok());
}

TEST(PipelineConfigTest, EachStageKnowsTheTypesOfItsConsumers) {
  std::map<std::string, std::vector<std::string>> seen;
  Pipeline pipeline([&](const StageContext& context) {
    seen[context.name()] = context.consumer_types();
    return CreateStage(context);
  });
  ASSERT_TRUE(pipeline
                  .Configure(ParseConfig(R"pb(
                    stage {
                      name: "source"
                      counting_source { count: 10 }
                    }
                    stage {
                      name: "pass"
                      input: "source.output"
                      pass_through {}
                    }
                    stage {
                      name: "last"
                      input: "pass"
                      pass_through {}
                    }
                    output: "numbers:last.output"
                  )pb"))
                  .ok());
  EXPECT_THAT(seen["source"], ElementsAre("pass_through"));
  EXPECT_THAT(seen["pass"], ElementsAre("pass_through"));
  EXPECT_THAT(seen["last"], ElementsAre("output"));
}

TEST(PipelineConfigTest, AStageAddedOnItsOwnKnowsNoConsumers) {
  bool asked = false;
  Pipeline pipeline([&](const StageContext& context) {
    asked = true;
    EXPECT_THAT(context.consumer_types(), IsEmpty());
    return CreateStage(context);
  });
  StageConfig source;
  source.set_name("source");
  source.mutable_counting_source()->set_count(1);
  ASSERT_TRUE(pipeline.AddStage(source).ok());
  EXPECT_TRUE(asked);
}

TEST(PipelineConfigTest, RejectsStageWithoutStageConfig) {
  const absl::Status status = Configure(R"pb(stage { name: "lonely" })pb");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      status.message(),
      AllOf(HasSubstr("stage 'lonely'"), HasSubstr("no stage-specific config"),
            HasSubstr("counting_source"), HasSubstr("pass_through")));
}

TEST(PipelineConfigTest, RejectsStageWithTwoStageConfigs) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "greedy"
      counting_source {}
      pass_through {}
    }
  )pb");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      status.message(),
      AllOf(HasSubstr("stage 'greedy'"), HasSubstr("2 stage-specific configs"),
            HasSubstr("counting_source, pass_through")));
}

TEST(PipelineConfigTest, RejectsUnknownInput) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "pass"
      input: "sauce"
      pass_through {}
    }
  )pb");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("stage 'pass'"), HasSubstr("'sauce'"),
                    HasSubstr("stages so far: source")));
}

TEST(PipelineConfigTest, RejectsUnknownOutputOfKnownStage) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "pass"
      input: "source.chunks"
      pass_through {}
    }
  )pb");
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("stage 'pass'"), HasSubstr("no output 'chunks'"),
                    HasSubstr("its outputs: output")));
}

TEST(PipelineConfigTest, RejectsElementTypeMismatch) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "strings"
      counting_source {}
    }
    stage {
      name: "pass"
      input: "strings"
      pass_through {}
    }
  )pb");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      status.message(),
      AllOf(HasSubstr("stage 'pass'"), HasSubstr("field 'input'"),
            HasSubstr("expects " + std::string(ElementTypeName<uint64_t>())),
            HasSubstr(std::string(ElementTypeName<std::string>()))));
}

TEST(PipelineConfigTest, RejectsDuplicateStageName) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "source"
      counting_source {}
    }
  )pb");
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("stage 'source'"), HasSubstr("field 'name'"),
                    HasSubstr("duplicates")));
}

TEST(PipelineConfigTest, RejectsEmptyStageName) {
  const absl::Status status = Configure(R"pb(stage { counting_source {} })pb");
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("stage #1"), HasSubstr("field 'name'")));
}

TEST(PipelineConfigTest, RejectsOutputAliasThatNamesNothing) {
  const absl::Status missing_stage = Configure(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    output: "numbers:nowhere"
  )pb");
  EXPECT_THAT(missing_stage.message(),
              AllOf(HasSubstr("output 'numbers:nowhere'"),
                    HasSubstr("names no earlier stage")));
  const absl::Status missing_output = Configure(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    output: "numbers:source.nothing"
  )pb");
  EXPECT_THAT(missing_output.message(),
              AllOf(HasSubstr("output 'numbers:source.nothing'"),
                    HasSubstr("no output 'nothing'")));
}

TEST(PipelineConfigTest, RejectsDuplicateOutputAlias) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    output: "a:source"
    output: "a:source.output"
  )pb");
  EXPECT_THAT(status.message(), HasSubstr("alias 'a' is used twice"));
}

TEST(PipelineConfigTest, RejectsZeroChannelCapacity) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "source"
      counting_source {}
      output { name: "output" capacity: 0 }
    }
  )pb");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("stage 'source' output 'output'"),
                    HasSubstr("field 'capacity' must be at least 1")));
}

TEST(PipelineConfigTest, RejectsSettingsForAnOutputTheStageLacks) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "source"
      counting_source {}
      output { name: "extra" capacity: 4 }
    }
  )pb");
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("stage 'source'"), HasSubstr("'extra'")));
}

TEST(PipelineConfigTest, RejectsBadStageField) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "pass"
      input: "source"
      pass_through { parallelism: 0 }
    }
  )pb");
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("stage 'pass'"),
                    HasSubstr("field 'pass_through.parallelism'")));
}

TEST(PipelineConfigTest, RejectsSourceWithInput) {
  const absl::Status status = Configure(R"pb(
    stage {
      name: "a"
      counting_source {}
    }
    stage {
      name: "b"
      input: "a"
      counting_source {}
    }
  )pb");
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("stage 'b'"), HasSubstr("takes no input")));
}

TEST(PipelineConfigTest, RejectsStartWithoutStages) {
  Pipeline pipeline(TestFactory);
  EXPECT_EQ(pipeline.Start().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PipelineConfigTest, RejectsWrongElementTypeAtGetNext) {
  Pipeline pipeline(TestFactory);
  ASSERT_TRUE(pipeline
                  .Configure(ParseConfig(R"pb(
                    stage {
                      name: "source"
                      counting_source { count: 1 }
                    }
                  )pb"))
                  .ok());
  ASSERT_TRUE(pipeline.Start().ok());
  auto result = pipeline.GetNextFor<std::string>("", std::chrono::seconds(1));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("carries"));
  EXPECT_EQ(pipeline.GetNextFor<uint64_t>("missing", std::chrono::seconds(1))
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

// The CPUs each of this process's threads named `name` may run on.
std::vector<std::vector<int>> AffinitiesOfThreadsNamed(
    const std::string& name) {
  std::vector<std::vector<int>> out;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string thread_name;
    std::getline(comm, thread_name);
    if (thread_name != name) continue;
    const pid_t tid = std::stoi(task.path().filename().string());
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (::sched_getaffinity(tid, sizeof(mask), &mask) != 0) continue;
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
    }
    out.push_back(std::move(cpus));
  }
  return out;
}

TEST(PipelinePlacementTest, PlacementOfMapsEveryConfigValue) {
  EXPECT_EQ(PlacementOf(DataLoaderConfig::AUTO), WorkerPlacement::kAuto);
  EXPECT_EQ(PlacementOf(DataLoaderConfig::PINNED), WorkerPlacement::kPinned);
  EXPECT_EQ(PlacementOf(DataLoaderConfig::FLOATING),
            WorkerPlacement::kFloating);
}

TEST(PipelinePlacementTest, WorkerPlacementComesFromTheConfig) {
  const std::vector<int> allowed = AllowedCpus();
  for (const char* placement : {"PINNED", "FLOATING"}) {
    Pipeline pipeline(TestFactory);
    ASSERT_TRUE(pipeline
                    .Configure(ParseConfig(absl::StrCat(
                        "worker_threads: 1 worker_placement: ", placement,
                        R"pb(
                          stage {
                            name: "source"
                            counting_source { count: 1 }
                          }
                        )pb")))
                    .ok());
    ASSERT_TRUE(pipeline.Start().ok());
    // The worker made the item: it had named and placed itself before.
    ASSERT_TRUE(
        pipeline.GetNextFor<uint64_t>("", std::chrono::seconds(30)).ok());
    const std::vector<std::vector<int>> affinities =
        AffinitiesOfThreadsNamed("sluice-w0");
    pipeline.Stop();
    ASSERT_EQ(affinities.size(), 1u) << placement;
    if (std::string(placement) == "PINNED") {
      EXPECT_EQ(affinities[0], std::vector<int>{allowed.front()});
    } else {
      EXPECT_EQ(affinities[0], allowed);
    }
  }
}

}  // namespace
}  // namespace sluice
