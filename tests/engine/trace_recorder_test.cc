#include "engine/trace_recorder.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/pipeline.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/testing/trace_check.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr uint64_t kItems = 20000;

// A fresh path for this test's trace.
std::string TracePath(const std::string& name) {
  const fs::path path = fs::path(::testing::TempDir()) /
                        absl::StrCat(name, "_", getpid(), ".json");
  fs::remove(path);
  return path.string();
}

// counting source -> 3 parallel workers (20 us of CPU per item) -> 1
// worker, on 2 threads, traced into `trace`.
DataLoaderConfig TracedConfig(const TraceConfig& trace) {
  DataLoaderConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      absl::StrCat(R"pb(
                     worker_threads: 2
                     metrics_interval_seconds: 0.05
                     stage { name: "source"
                             counting_source { count:)pb",
                   kItems, R"pb(}
                                }
        stage {
          name: "work"
          input: "source"
          pass_through { parallelism: 3 work_nanos_per_item: 20000 }
          output { name: "output" capacity: 64 }
        }
        stage {
          name: "last"
          input: "work"
          pass_through {}
        }
      )pb"),
      &config));
  *config.mutable_trace() = trace;
  return config;
}

// Runs `config` to its end, pulling every item; returns the final metrics.
DataLoaderMetricsProto RunToEnd(const DataLoaderConfig& config,
                                uint64_t* items) {
  Pipeline pipeline(CreateStage);
  EXPECT_TRUE(pipeline.Configure(config).ok());
  EXPECT_TRUE(pipeline.Start().ok());
  *items = 0;
  while (true) {
    auto next = pipeline.GetNextFor<uint64_t>("", std::chrono::seconds(60));
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok() || next->kind != Channel<uint64_t>::GetResult::Kind::kItem) {
      break;
    }
    ++*items;
  }
  pipeline.Stop();
  EXPECT_TRUE(pipeline.trace_status().ok()) << pipeline.trace_status();
  return pipeline.GetMetrics();
}

TEST(TraceRecorderTest, SpansAccountForEveryStagesBusyTime) {
  TraceConfig settings;
  settings.set_file(TracePath("busy"));
  uint64_t items = 0;
  const DataLoaderMetricsProto metrics =
      RunToEnd(TracedConfig(settings), &items);
  ASSERT_EQ(items, kItems);
  const testing::TraceSummary trace = testing::CheckTrace(settings.file());
  EXPECT_EQ(trace.dropped_events, 0);
  // Every batch's hand-off, on the thread that took it.
  EXPECT_EQ(trace.spans.at("output"), kItems);
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    const double busy = stage.load().busy_seconds();
    ASSERT_GT(busy, 0) << stage.name();
    ASSERT_TRUE(trace.busy_seconds.contains(stage.name())) << stage.name();
    // The spans come from the meter's own clock readings: equal but for
    // the file's microsecond rounding.
    EXPECT_NEAR(trace.busy_seconds.at(stage.name()), busy, 0.01 * busy)
        << stage.name();
  }
  // Channel fills as counters, within their capacity.
  EXPECT_GT(trace.counters, 0);
  ASSERT_TRUE(trace.counter_max.contains("output fill (capacity 64) items"));
  EXPECT_LE(trace.counter_max.at("output fill (capacity 64) items"), 64);
  fs::remove(settings.file());
}

TEST(TraceRecorderTest, KeepsAtMostMaxEventsAndCountsTheRest) {
  TraceConfig settings;
  settings.set_file(TracePath("bounded"));
  settings.set_max_events(100);
  uint64_t items = 0;
  RunToEnd(TracedConfig(settings), &items);
  ASSERT_EQ(items, kItems);
  const testing::TraceSummary trace = testing::CheckTrace(settings.file());
  EXPECT_LE(trace.events, 100);
  EXPECT_GT(trace.events, 0);
  // At least one event per item was offered (each hand-off).
  EXPECT_GE(trace.events + trace.dropped_events, kItems);
  fs::remove(settings.file());
}

TEST(TraceRecorderTest, RecordsNothingOutsideItsWindow) {
  TraceConfig settings;
  settings.set_file(TracePath("window"));
  settings.set_start_seconds(3600);
  uint64_t items = 0;
  RunToEnd(TracedConfig(settings), &items);
  const testing::TraceSummary trace = testing::CheckTrace(settings.file());
  EXPECT_EQ(trace.events, 0);
  fs::remove(settings.file());
}

TEST(TraceRecorderTest, BadSettingsFailAtConfigureNamingTheField) {
  const std::string dir = ::testing::TempDir();
  const struct {
    TraceConfig settings;
    const char* expected;
  } cases[] = {
      {TraceConfig(), "field 'trace.file' must be set"},
      {[&] {
         TraceConfig t;
         t.set_file(dir + "/no/such/dir/run.json");
         return t;
       }(),
       "does not exist"},
      {[&] {
         TraceConfig t;
         t.set_file(dir);
         return t;
       }(),
       "is a directory"},
      {[&] {
         TraceConfig t;
         t.set_file(TracePath("x"));
         t.set_max_events(0);
         return t;
       }(),
       "field 'trace.max_events'"},
      {[&] {
         TraceConfig t;
         t.set_file(TracePath("x"));
         t.set_counter_interval_seconds(0);
         return t;
       }(),
       "field 'trace.counter_interval_seconds'"},
      {[&] {
         TraceConfig t;
         t.set_file(TracePath("x"));
         t.set_duration_seconds(-1);
         return t;
       }(),
       "field 'trace.duration_seconds'"},
  };
  for (const auto& [settings, expected] : cases) {
    Pipeline pipeline(CreateStage);
    const absl::Status status = pipeline.Configure(TracedConfig(settings));
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(expected));
    EXPECT_THAT(std::string(status.message()), HasSubstr("trace."));
  }
}

TEST(TraceRecorderTest, AFileThatCannotBeWrittenAtStopIsAStatusNotACrash) {
  // The directory goes away during the run: Stop still returns, and says
  // why the trace is missing.
  const fs::path dir =
      fs::path(::testing::TempDir()) / absl::StrCat("vanishing_", getpid());
  fs::create_directories(dir);
  TraceConfig settings;
  settings.set_file((dir / "run.json").string());
  Pipeline pipeline(CreateStage);
  ASSERT_TRUE(pipeline.Configure(TracedConfig(settings)).ok());
  ASSERT_TRUE(pipeline.Start().ok());
  fs::remove_all(dir);
  pipeline.Stop();
  EXPECT_FALSE(pipeline.trace_status().ok());
  EXPECT_THAT(std::string(pipeline.trace_status().message()),
              HasSubstr("trace.file"));
}

}  // namespace
}  // namespace sluice
