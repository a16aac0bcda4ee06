#include "tests/reliability/checkpoint_workloads.h"

#include "bindings/cli/audio_data.h"
#include "gtest/gtest.h"
#include "stages/audio/default_pipeline.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/lc0/format/data_generator.h"
#include "tests/reliability/batch_hashes.h"
#include "tests/testing/sanitizers.h"

namespace sluice::testing {
namespace {

// Under a sanitizer lc0 runs on a third of the games, with the window
// and the reservoir to match.
constexpr int kLc0GamesPerTar = UnlessSanitizer(20, 7);
constexpr int kLc0Games = 3 * kLc0GamesPerTar;
constexpr uint64_t kLc0ChunkPool = 2 * kLc0GamesPerTar;  // two tars' worth

void WriteLc0(const std::string& dir) {
  const absl::StatusOr<lc0::GeneratedFiles> written =
      lc0::WriteGames({.seed = 5, .version = 6, .input_format = 1},
                      {.mode = lc0::OutputMode::kTar,
                       .dir = dir,
                       .games = kLc0Games,
                       .games_per_tar = kLc0GamesPerTar});
  ASSERT_TRUE(written.ok()) << written.status();
}

DataLoaderConfig Lc0Config(const std::string& dir, Pass pass) {
  absl::StatusOr<DataLoaderConfig> config = lc0::MakePipeline(
      {.directories = {dir},
       .mode = pass == Pass::kEval ? lc0::PipelineMode::kEval
                                   : lc0::PipelineMode::kTrain,
       .batch_size = 64,
       .chunk_pool_size = kLc0ChunkPool,
       .reservoir_size = UnlessSanitizer<uint64_t>(1500, 600),
       .min_fill = UnlessSanitizer<uint64_t>(500, 200),
       .seed = 3});
  EXPECT_TRUE(config.ok()) << config.status();
  config->set_deterministic(true);
  SetParallelism(*config, {2, 2});
  return *config;
}

cli::AudioDatasetOptions AudioOptions(const std::string& dir) {
  // Under a sanitizer 48 clips in batches of 8 with a shuffle buffer
  // of 32: still about 6 batches a pass, more clips than the buffer holds.
  return {.dir = dir,
          .clips = UnlessSanitizer<int64_t>(120, 48),
          .classes = 4,
          .files = 3,
          .rows_per_batch = 16,
          .corrupt_every = 30};
}

void WriteAudio(const std::string& dir) {
  absl::StatusOr<cli::AudioDataset> written =
      cli::WriteAudioDataset(AudioOptions(dir));
  ASSERT_TRUE(written.ok()) << written.status();
}

DataLoaderConfig AudioConfig(const std::string& dir, Pass pass) {
  absl::StatusOr<DataLoaderConfig> config = audio::MakePipeline(
      {.directories = {dir},
       .mode = pass == Pass::kEval ? audio::PipelineMode::kEval
                                   : audio::PipelineMode::kTrain,
       .clip_seconds = 0.25,
       .n_mels = 16,
       .batch_size = UnlessSanitizer(16u, 8u),
       .shuffle_buffer = UnlessSanitizer<uint64_t>(64, 32),
       .min_fill = 16,
       .seed = 3});
  EXPECT_TRUE(config.ok()) << config.status();
  config->set_deterministic(true);
  SetParallelism(*config, {2, 2});
  return *config;
}

}  // namespace

CheckpointWorkload Lc0Workload() {
  return {.name = "lc0",
          .write = WriteLc0,
          .config = Lc0Config,
          .train_batches = UnlessSanitizer<size_t>(50, 20)};
}

CheckpointWorkload AudioWorkload() {
  // About 7 batches a pass (6 under a sanitizer).
  return {.name = "audio",
          .write = WriteAudio,
          .config = AudioConfig,
          .train_batches = UnlessSanitizer<size_t>(30, 20)};
}

std::vector<CheckpointWorkload> CheckpointWorkloads() {
  return {Lc0Workload(), AudioWorkload()};
}

uint64_t SkipsCounted(const DataLoaderMetricsProto& metrics,
                      const std::string& reason) {
  uint64_t count = 0;
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    for (const SkipCountProto& skip : stage.skipped()) {
      if (skip.reason() == reason) count += skip.count();
    }
  }
  return count;
}

}  // namespace sluice::testing
