// autotune_benchmark: DataLoaderConfig.autotune from a deliberately bad
// config, against the hand-tuned default, on the lc0 training pipeline
// (proto/examples/lc0_train.textproto) and the audio training pipeline
// (stages/audio/default_pipeline.h).
//
// Four configs per pipeline, run in interleaved rounds (a slow spell of a
// shared machine hits every config alike), each for --seconds:
//   default   the hand-tuned default config;
//   bad       every `parallelism` field 1 and every output capacity 1;
//   autotune  bad, with autotune: true;
//   default + autotune  the default, with autotune: true (what the tuner
//             does to a config that is already good: it may only raise).
// In all four, shuffling reservoirs fill to their size before they emit
// (WithFullReservoirs below).
// Each run counts the batches the consumer takes (TakeAndDiscard) every
// 0.5 s. A config's rate is that of the run's last half (steady state); the
// autotune run's "time to 90 %" is the first time from Start() after which
// every 2-s window delivers 90 % of the default's rate or more ("for
// good"; -1 when a late window dips below), after the first such window
// ("first 90 %"); beside them, the "for good" time of the default run itself
// (its own start-up and its windows' noise: the least the autotune run
// could show).
//
//   autotune_benchmark [--pipeline lc0|audio|both] [--seconds 20]
//       [--rounds 2] [--threads 2] [--games 2000] [--clips 2000]
//
// Run from the repository (the lc0 config is read from proto/examples/).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/audio_bench_common.h"
#include "bench/audio_bench_data.h"
#include "bench/lc0_bench_support.h"
#include "engine/data_loader.h"
#include "engine/stage_config_edit.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "stages/audio/default_pipeline.h"
#include "stages/stage_factory.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSampleEvery = std::chrono::milliseconds(500);

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "autotune_benchmark: %s\n", message.c_str());
  std::exit(1);
}

// `config` with every shuffling reservoir filled to its size before it
// emits (min_fill unset). A reservoir that may start below its size grows
// while the stages after it are the bottleneck, as they are in the bad
// config's first seconds, and never shrinks; a full reservoir samples
// from more memory (lc0's 200,000 frames: about 10 % fewer batches/s than
// at its min_fill). Full in every run, the comparison measures the
// settings, not how far each run's reservoir grew.
DataLoaderConfig WithFullReservoirs(DataLoaderConfig config) {
  for (StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_shuffling_frame_sampler()) {
      stage.mutable_shuffling_frame_sampler()->clear_min_fill();
    }
    if (stage.has_shuffle_buffer()) {
      stage.mutable_shuffle_buffer()->clear_min_fill();
    }
  }
  return config;
}

// Every `parallelism` field of every stage 1, every stage's "output"
// capacity 1.
DataLoaderConfig BadConfig(DataLoaderConfig config) {
  for (StageConfig& stage : *config.mutable_stage()) {
    const google::protobuf::Reflection* reflection = stage.GetReflection();
    std::vector<const google::protobuf::FieldDescriptor*> fields;
    reflection->ListFields(stage, &fields);
    for (const google::protobuf::FieldDescriptor* field : fields) {
      if (field->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE ||
          field->is_repeated()) {
        continue;
      }
      google::protobuf::Message* typed =
          reflection->MutableMessage(&stage, field);
      const google::protobuf::FieldDescriptor* parallelism =
          typed->GetDescriptor()->FindFieldByName("parallelism");
      if (parallelism != nullptr &&
          parallelism->cpp_type() ==
              google::protobuf::FieldDescriptor::CPPTYPE_UINT32) {
        typed->GetReflection()->SetUInt32(typed, parallelism, 1);
      }
    }
    SetOutputCapacity(stage, "output", 1);
  }
  return config;
}

struct RunResult {
  std::vector<double> delivered;  // cumulative batches, every kSampleEvery
  double rate = 0;                // batches/s over the last half
  std::string chosen;             // the tuner's choices
};

RunResult RunFor(const DataLoaderConfig& config, double seconds) {
  RunResult result;
  DataLoader loader(CreateStage);
  loader.Configure(config);
  Pipeline& pipeline = loader.pipeline();
  const auto start = Clock::now();
  loader.Start();
  uint64_t taken = 0;
  auto next_sample = start + kSampleEvery;
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    const ChannelBase::TakeResult took =
        pipeline.TakeAndDiscard(std::chrono::milliseconds(50));
    if (took == ChannelBase::TakeResult::kEndOfStream) {
      Fail("the pipeline ended: " + pipeline.status().ToString());
    }
    if (took == ChannelBase::TakeResult::kItem) ++taken;
    while (Clock::now() >= next_sample) {
      result.delivered.push_back(static_cast<double>(taken));
      next_sample += kSampleEvery;
    }
  }
  loader.Stop();
  const size_t n = result.delivered.size();
  const size_t half = n / 2;
  result.rate =
      (result.delivered[n - 1] - result.delivered[half - 1]) /
      ((n - half) * std::chrono::duration<double>(kSampleEvery).count());
  const DataLoaderMetricsProto metrics = loader.GetMetrics();
  if (metrics.has_autotune()) {
    const AutotuneMetricsProto& tuner = metrics.autotune();
    for (const AutotuneSettingProto& setting : tuner.setting()) {
      absl::StrAppend(&result.chosen, result.chosen.empty() ? "" : ", ",
                      setting.stage(), " ", setting.setting(), " ",
                      setting.configured(), "->", setting.chosen());
    }
    absl::StrAppend(&result.chosen, "; ", tuner.adjustments(), " of ",
                    tuner.trials(), " raises kept",
                    tuner.settled() ? ", settled" : ", not settled");
  }
  return result;
}

// The first time (seconds from Start) from which a 2-s window delivers
// `target` batches/s or more: with `every_later`, every window from then
// on does. -1 if none.
double TimeToReach(const RunResult& run, double target, bool every_later) {
  const double step = std::chrono::duration<double>(kSampleEvery).count();
  const size_t window = 4;  // samples per 2 s
  double reached = -1;
  for (size_t i = window; i < run.delivered.size(); ++i) {
    const double rate =
        (run.delivered[i] - run.delivered[i - window]) / (window * step);
    if (rate >= target) {
      if (reached < 0) reached = (i - window + 1) * step;
      if (!every_later) return reached;
    } else {
      reached = -1;
    }
  }
  return reached;
}

void Compare(const std::string& name, const DataLoaderConfig& config,
             double seconds, int rounds) {
  const DataLoaderConfig tuned = WithFullReservoirs(config);
  DataLoaderConfig bad = BadConfig(tuned);
  DataLoaderConfig autotune = bad;
  autotune.set_autotune(true);
  DataLoaderConfig default_autotune = tuned;
  default_autotune.set_autotune(true);
  std::printf("\n%s: %d rounds of %.0f s per config\n", name.c_str(), rounds,
              seconds);
  std::printf("%-6s %12s %12s %12s %9s %9s %10s %10s %14s %12s %9s\n", "round",
              "default b/s", "bad b/s", "autotune b/s", "at/def", "bad/def",
              "first 90%", "to 90% s", "default's own", "def+at b/s",
              "d+at/def");
  std::vector<double> ratios;
  std::vector<double> default_ratios;
  std::vector<double> firsts;
  std::vector<double> times;
  for (int round = 0; round < rounds; ++round) {
    const RunResult def = RunFor(tuned, seconds);
    const RunResult untuned = RunFor(bad, seconds);
    const RunResult at = RunFor(autotune, seconds);
    const RunResult def_at = RunFor(default_autotune, seconds);
    const double first90 = TimeToReach(at, 0.9 * def.rate, false);
    const double to90 = TimeToReach(at, 0.9 * def.rate, true);
    ratios.push_back(at.rate / def.rate);
    firsts.push_back(first90);
    times.push_back(to90);
    default_ratios.push_back(def_at.rate / def.rate);
    std::printf(
        "%-6d %12.2f %12.2f %12.2f %9.3f %9.3f %10.1f %10.1f %14.1f %12.2f "
        "%9.3f\n",
        round + 1, def.rate, untuned.rate, at.rate, at.rate / def.rate,
        untuned.rate / def.rate, first90, to90,
        TimeToReach(def, 0.9 * def.rate, true), def_at.rate,
        def_at.rate / def.rate);
    std::printf("       autotune chose: %s\n", at.chosen.c_str());
    std::printf("       default + autotune chose: %s\n", def_at.chosen.c_str());
    std::fflush(stdout);
  }
  std::sort(ratios.begin(), ratios.end());
  std::sort(firsts.begin(), firsts.end());
  std::sort(times.begin(), times.end());
  std::sort(default_ratios.begin(), default_ratios.end());
  std::printf(
      "%s: median autotune/default %.3f, median first 2-s window at 90%% "
      "%.1f s, median time to 90%% for good %.1f s, median (default + "
      "autotune)/default %.3f\n",
      name.c_str(), ratios[ratios.size() / 2], firsts[firsts.size() / 2],
      times[times.size() / 2], default_ratios[default_ratios.size() / 2]);
}

int Main(int argc, char** argv) {
  std::string pipeline = "both";
  double seconds = 20;
  int rounds = 2;
  int threads = 2;
  int games = 2000;
  int64_t clips = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    bool ok = true;
    if (flag == "--pipeline") {
      pipeline = value;
    } else if (flag == "--seconds") {
      ok = absl::SimpleAtod(value, &seconds) && seconds >= 4;
    } else if (flag == "--rounds") {
      ok = absl::SimpleAtoi(value, &rounds) && rounds > 0;
    } else if (flag == "--threads") {
      ok = absl::SimpleAtoi(value, &threads) && threads > 0;
    } else if (flag == "--games") {
      ok = absl::SimpleAtoi(value, &games) && games > 0;
    } else if (flag == "--clips") {
      ok = absl::SimpleAtoi(value, &clips) && clips > 0;
    } else {
      ok = false;
    }
    if (!ok) Fail("bad flag " + flag + " " + value);
  }
  if (pipeline == "lc0" || pipeline == "both") {
    const std::string dir = absl::StrCat("/tmp/sluice_lc0_bench_", games);
    lc0::bench::EnsureData(dir, games);
    Compare("lc0", lc0::bench::TrainConfig(dir, threads), seconds, rounds);
  }
  if (pipeline == "audio" || pipeline == "both") {
    audio_bench::Options options;
    options.clips = clips;
    options.dir = absl::StrCat("/tmp/sluice_audio_bench_", clips);
    audio_bench::EnsureData(options);
    absl::StatusOr<DataLoaderConfig> config =
        audio::MakePipeline({.directories = {audio_bench::ArrowDir(options)},
                             .mode = audio::PipelineMode::kTrain,
                             .worker_threads = static_cast<uint32_t>(threads)});
    if (!config.ok()) Fail(config.status().ToString());
    Compare("audio", *config, seconds, rounds);
  }
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
