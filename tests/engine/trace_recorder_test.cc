#include "engine/trace_recorder.h"

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/load_meter.h"
#include "engine/pipeline.h"
#include "engine/thread_span.h"
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

// counting source -> `workers` parallel workers (20 us of CPU per item) ->
// 1 worker, on 2 threads, traced into `trace`.
DataLoaderConfig TracedConfig(const TraceConfig& trace, int workers = 3) {
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
  config.mutable_stage(1)->mutable_pass_through()->set_parallelism(workers);
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

TEST(TraceRecorderTest, BusyCountsAndWorkerThreadSpansAccountForBusyTime) {
  TraceConfig settings;
  settings.set_file(TracePath("busy"));
  uint64_t items = 0;
  const auto started = std::chrono::steady_clock::now();
  const DataLoaderMetricsProto metrics =
      RunToEnd(TracedConfig(settings), &items);
  const double wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  ASSERT_EQ(items, kItems);
  const testing::TraceSummary trace = testing::CheckTrace(settings.file());
  EXPECT_EQ(trace.dropped_events, 0);
  // Every batch's hand-off, on the thread that took it.
  EXPECT_EQ(trace.spans.at("output"), kItems);
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    const double busy = stage.load().busy_seconds();
    ASSERT_GT(busy, 0) << stage.name();
    // The busy count comes from the meter's own clock readings: its
    // integral is the busy time but for the file's microsecond rounding.
    const std::string count = stage.name() + " busy coroutines";
    ASSERT_TRUE(trace.counter_integral.contains(count)) << count;
    EXPECT_NEAR(trace.counter_integral.at(count), busy, 0.01 * busy) << count;
    // The thread spans: when a coroutine of the stage ran on a worker
    // thread. Busy also counts a coroutine that yielded and waits in the
    // executor's queue, so they hold at most the busy time.
    ASSERT_TRUE(trace.busy_seconds.contains(stage.name())) << stage.name();
    EXPECT_GT(trace.busy_seconds.at(stage.name()), 0) << stage.name();
    EXPECT_LE(trace.busy_seconds.at(stage.name()), 1.01 * busy + 1e-3)
        << stage.name();
  }
  // A track per worker thread, named as top -H shows it, busy at most the
  // run's wall time (its spans never overlap: CheckTrace).
  EXPECT_EQ(trace.thread_busy_seconds.size(), 2);
  for (const auto& [track, seconds] : trace.thread_busy_seconds) {
    EXPECT_THAT(trace.thread_names.at(track), HasSubstr("sluice-w"));
    EXPECT_LE(seconds, wall_seconds);
  }
  // Channel fills as counters, within their capacity.
  EXPECT_GT(trace.counters, 0);
  ASSERT_TRUE(trace.counter_max.contains("output fill (capacity 64) items"));
  EXPECT_LE(trace.counter_max.at("output fill (capacity 64) items"), 64);
  fs::remove(settings.file());
}

// With a worker thread free for every coroutine that wants one, nothing
// waits in the executor's queue: a stage's spans on the worker threads
// then hold its busy time.
TEST(TraceRecorderTest, WithAThreadFreeForEachBusyCoroutineSpansHoldBusyTime) {
  TraceConfig settings;
  settings.set_file(TracePath("unsaturated"));
  uint64_t items = 0;
  const DataLoaderMetricsProto metrics =
      RunToEnd(TracedConfig(settings, /*workers=*/1), &items);
  ASSERT_EQ(items, kItems);
  const testing::TraceSummary trace = testing::CheckTrace(settings.file());
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    if (stage.name() != "work") continue;
    const double busy = stage.load().busy_seconds();
    ASSERT_TRUE(trace.busy_seconds.contains(stage.name()));
    EXPECT_NEAR(trace.busy_seconds.at(stage.name()), busy, 0.1 * busy);
  }
  fs::remove(settings.file());
}

// Names the calling thread (as the trace's track names show it).
void NameThisThread(const char* name) {
  pthread_setname_np(pthread_self(), name);
}

TEST(TraceRecorderTest, ACoroutineThatMovesBetweenThreadsLeavesASpanOnEach) {
  TraceConfig settings;
  settings.set_file(TracePath("moves"));
  TraceRecorder trace(settings);
  LoadMeter meter;
  const uint32_t stage = trace.AddStage("mover", "test");
  meter.TraceInto(&trace, stage);
  trace.Begin(std::chrono::steady_clock::now());
  // The coroutine starts on thread a, yields, resumes on thread b, waits
  // there and finishes there; thread a stays alive meanwhile (a thread id
  // is a track).
  std::promise<ThreadSpan::Held> yielded;
  std::promise<void> finished;
  std::thread a([&] {
    NameThisThread("test-a");
    meter.WorkerStarted();
    yielded.set_value(ThreadSpan::Suspend());
    finished.get_future().wait();
  });
  std::thread b([&] {
    NameThisThread("test-b");
    ThreadSpan::Resume(yielded.get_future().get());
    meter.BeginWait();
    meter.EndWait();
    meter.WorkerFinished();
    finished.set_value();
  });
  b.join();
  a.join();
  const double busy = meter.Flush().busy_seconds();
  ASSERT_TRUE(trace.WriteFile().ok());
  const testing::TraceSummary summary = testing::CheckTrace(settings.file());
  EXPECT_EQ(summary.spans.at("busy"), 3);  // a; b before and after the wait
  std::set<std::string> threads;
  for (const auto& [track, seconds] : summary.thread_busy_seconds) {
    threads.insert(summary.thread_names.at(track));
  }
  EXPECT_EQ(threads, (std::set<std::string>{"test-a", "test-b"}));
  EXPECT_NEAR(summary.counter_integral.at("mover busy coroutines"), busy,
              0.01 * busy + 2e-6);
  EXPECT_LE(summary.busy_seconds.at("mover"), busy + 2e-6);
  fs::remove(settings.file());
}

TEST(TraceRecorderTest, ThreadsRecordingAtOnceGiveAWellFormedTrace) {
  TraceConfig settings;
  settings.set_file(TracePath("threads"));
  TraceRecorder trace(settings);
  constexpr int kThreads = 4;
  constexpr int kRounds = 500;
  LoadMeter meters[2];
  trace.AddStage("even", "test");
  trace.AddStage("odd", "test");
  meters[0].TraceInto(&trace, 0);
  meters[1].TraceInto(&trace, 1);
  trace.Begin(std::chrono::steady_clock::now());
  // Each thread runs coroutines of both stages that yield (ending their
  // span on this thread) and resume on the next thread round the ring.
  std::vector<std::thread> threads;
  std::mutex handoff_mu;
  std::vector<ThreadSpan::Held> handoff;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      LoadMeter& meter = meters[t % 2];
      for (int round = 0; round < kRounds; ++round) {
        meter.WorkerStarted();
        meter.BeginWait();
        meter.EndWait();
        const ThreadSpan::Held held = ThreadSpan::Suspend();
        {
          std::lock_guard lock(handoff_mu);
          handoff.push_back(held);
        }
        std::optional<ThreadSpan::Held> other;
        {
          std::lock_guard lock(handoff_mu);
          other = handoff.front();
          handoff.erase(handoff.begin());
        }
        ThreadSpan::Resume(*other);
        // The coroutine taken over finishes here.
        (other->stage == 0 ? meters[0] : meters[1]).WorkerFinished();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double busy[2] = {meters[0].Flush().busy_seconds(),
                          meters[1].Flush().busy_seconds()};
  ASSERT_TRUE(trace.WriteFile().ok());
  const testing::TraceSummary summary = testing::CheckTrace(settings.file());
  EXPECT_EQ(summary.dropped_events, 0);
  EXPECT_EQ(summary.spans.at("busy"), 3 * kThreads * kRounds);
  const char* names[2] = {"even", "odd"};
  for (int s = 0; s < 2; ++s) {
    const std::string count = absl::StrCat(names[s], " busy coroutines");
    EXPECT_NEAR(summary.counter_integral.at(count), busy[s], 0.01 * busy[s])
        << count;
    EXPECT_LE(summary.busy_seconds.at(names[s]), 1.01 * busy[s]) << names[s];
  }
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
