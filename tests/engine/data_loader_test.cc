#include "engine/data_loader.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing::ParseConfig;

std::string Serialized(const std::string& text) {
  return ParseConfig(text).SerializeAsString();
}

// Answers every control request with an anchor named after the stage.
class AnchorEcho final : public Stage {
 public:
  explicit AnchorEcho(const StageContext& context) : Stage(context) {}
  void Start(const StageRuntime&) override {}
  std::optional<StageControlResponse> Control(
      const StageControlRequest& request) override {
    if (!request.has_chunk_pool_request()) return std::nullopt;
    StageControlResponse response;
    response.mutable_chunk_pool_response()->set_chunk_anchor(name() +
                                                             "-anchor");
    return response;
  }
};

absl::StatusOr<std::unique_ptr<Stage>> EchoFactory(
    const StageContext& context) {
  if (context.name().rfind("echo", 0) == 0) {
    return std::unique_ptr<Stage>(new AnchorEcho(context));
  }
  return CreateStage(context);
}

constexpr char kFinite[] = R"pb(
  worker_threads: 2
  stage {
    name: "source"
    counting_source { count: 1000 }
  }
  stage {
    name: "pass"
    input: "source"
    pass_through {}
  }
)pb";

TEST(DataLoaderTest, FinitePipelineDeliversEverythingInOrderThenEnds) {
  DataLoader loader(CreateStage);
  loader.AddStages(Serialized(kFinite));
  loader.Start();
  for (uint64_t expected = 0; expected < 1000; ++expected) {
    std::optional<uint64_t> item = loader.GetNext<uint64_t>();
    ASSERT_TRUE(item.has_value());
    EXPECT_EQ(*item, expected);
  }
  EXPECT_EQ(loader.GetNext<uint64_t>(), std::nullopt);
  EXPECT_EQ(loader.GetNext<uint64_t>(), std::nullopt);
  loader.Stop();
  // The final snapshot, taken at Stop(), holds the whole run.
  const DataLoaderMetricsProto metrics = loader.GetMetrics();
  ASSERT_EQ(metrics.total_stage_metrics_size(), 2);
  EXPECT_EQ(metrics.total_stage_metrics(0).counting_source().items_produced(),
            1000u);
  EXPECT_EQ(metrics.total_stage_metrics(1).pass_through().items_forwarded(),
            1000u);
  const QueueMetricProto& queue =
      metrics.total_stage_metrics(1).output_queue_metrics(0);
  EXPECT_EQ(queue.put_count(), 1000u);
  EXPECT_EQ(queue.get_count(), 1000u);
  EXPECT_TRUE(queue.closed());
}

TEST(DataLoaderTest, AddStageOneByOneAndParallelStageDeliverEachItemOnce) {
  DataLoader loader(CreateStage);
  StageConfig source;
  source.set_name("source");
  source.mutable_counting_source()->set_count(5000);
  StageConfig pass;
  pass.set_name("pass");
  pass.add_input("source.output");
  pass.mutable_pass_through()->set_parallelism(4);
  loader.AddStage(source.SerializeAsString());
  loader.AddStage(pass.SerializeAsString());
  loader.Start();
  std::set<uint64_t> seen;
  while (std::optional<uint64_t> item = loader.GetNext<uint64_t>()) {
    EXPECT_TRUE(seen.insert(*item).second) << "duplicate " << *item;
  }
  EXPECT_EQ(seen.size(), 5000u);
  EXPECT_EQ(*seen.rbegin(), 4999u);
}

TEST(DataLoaderTest, StopIsIdempotentAndStopsEndlessPipeline) {
  DataLoader loader(CreateStage);
  loader.AddStages(Serialized(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "pass"
      input: "source"
      pass_through { parallelism: 2 }
    }
  )pb"));
  loader.Start();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(loader.GetNext<uint64_t>());
  loader.Stop();
  loader.Stop();
  // After Stop the outputs are cancelled: end of stream, not a hang.
  EXPECT_EQ(loader.GetNext<uint64_t>(), std::nullopt);
}

TEST(DataLoaderTest, StopsWhileEveryStageIsBlocked) {
  DataLoader loader(CreateStage);
  // Nobody pulls: every channel fills and every stage suspends on a send.
  loader.AddStages(Serialized(R"pb(
    stage {
      name: "source"
      counting_source {}
      output { capacity: 2 }
    }
    stage {
      name: "a"
      input: "source"
      pass_through {}
      output { capacity: 2 }
    }
    stage {
      name: "b"
      input: "a"
      pass_through {}
      output { capacity: 2 }
    }
  )pb"));
  loader.Start();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (loader.pipeline().FindOutput("").value()->Size() < 2 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  loader.Stop();
  EXPECT_EQ(loader.pipeline().FindOutput("").value()->Size(), 0u);
}

TEST(DataLoaderTest, DestructorStopsARunningPipeline) {
  auto loader = std::make_unique<DataLoader>(CreateStage);
  loader->AddStages(Serialized(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
  )pb"));
  loader->Start();
  ASSERT_TRUE(loader->GetNext<uint64_t>().has_value());
  loader.reset();
  SUCCEED() << "destroyed without Stop() and without hanging";
}

TEST(DataLoaderTest, StageExceptionFailsThePipelineThroughGetNext) {
  DataLoader loader(CreateStage);
  loader.AddStages(Serialized(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "faulty"
      input: "source"
      pass_through { fail_after_items: 10 }
    }
  )pb"));
  loader.Start();
  int delivered = 0;
  try {
    while (loader.GetNext<uint64_t>()) ++delivered;
    FAIL() << "the pipeline ended instead of failing";
  } catch (const PipelineError& error) {
    EXPECT_THAT(error.what(), HasSubstr("stage 'faulty' failed"));
    EXPECT_THAT(error.what(), HasSubstr("injected failure after 10 items"));
  }
  EXPECT_LE(delivered, 10);
  EXPECT_THROW(loader.GetNext<uint64_t>(), PipelineError);
  EXPECT_THAT(loader.GetMetrics().error(), HasSubstr("faulty"));
}

TEST(DataLoaderTest, ConfigErrorsAreConfigErrorExceptions) {
  DataLoader loader(CreateStage);
  EXPECT_THROW(loader.AddStages(Serialized(R"pb(stage { name: "x" })pb")),
               ConfigError);
  EXPECT_THROW(loader.AddStage("not a proto \xff\xff"), ConfigError);
  EXPECT_THROW(loader.Start(), ConfigError);
}

TEST(DataLoaderTest, ControlMessagesFanOutToEveryStage) {
  DataLoader loader(EchoFactory);
  loader.AddStages(Serialized(R"pb(
    stage {
      name: "echo1"
      counting_source {}
    }
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "echo2"
      counting_source {}
    }
  )pb"));
  StageControlRequest request;
  request.mutable_chunk_pool_request()->set_reset_chunk_anchor(true);
  const std::vector<StageControlResponse> responses =
      loader.SendControlMessage(request);
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[0].stage_name(), "echo1");
  EXPECT_EQ(responses[0].chunk_pool_response().chunk_anchor(), "echo1-anchor");
  EXPECT_EQ(responses[1].stage_name(), "echo2");
  const std::vector<std::string> serialized =
      loader.SendControlMessage(request.SerializeAsString());
  ASSERT_EQ(serialized.size(), 2u);
  StageControlResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(serialized[1]));
  EXPECT_EQ(parsed.chunk_pool_response().chunk_anchor(), "echo2-anchor");
  EXPECT_TRUE(loader.SendControlMessage(StageControlRequest()).empty());
}

TEST(DataLoaderTest, LoadIsHighForBusyStageAndLowForStarvedStage) {
  DataLoader loader(CreateStage);
  loader.AddStages(Serialized(R"pb(
    worker_threads: 2
    metrics_interval_seconds: 0.1
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "busy"
      input: "source"
      pass_through { work_nanos_per_item: 200000 }
    }
    stage {
      name: "starved"
      input: "busy"
      pass_through {}
    }
  )pb"));
  loader.Start();
  DataLoaderMetricsProto metrics;
  while (metrics.snapshot_index() < 5) {
    ASSERT_TRUE(loader.GetNext<uint64_t>().has_value());
    metrics = loader.GetMetrics();
  }
  loader.Stop();
  metrics = loader.GetMetrics();
  ASSERT_EQ(metrics.total_stage_metrics_size(), 3);
  const double busy = metrics.total_stage_metrics(1).load().load();
  const double starved = metrics.total_stage_metrics(2).load().load();
  // Relative bounds: the suite runs on a loaded 2-core machine (and under
  // TSan), where the busy stage may wait for a CPU or for its consumer a
  // good part of the time; the starved one still waits far more.
  EXPECT_GT(busy, 0.2) << metrics.DebugString();
  EXPECT_GT(busy, 4 * starved) << metrics.DebugString();
  EXPECT_LT(starved, 0.3) << metrics.DebugString();
  EXPECT_FALSE(metrics.io_backend().empty());
}

}  // namespace
}  // namespace sluice
