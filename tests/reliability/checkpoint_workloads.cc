#include "tests/reliability/checkpoint_workloads.h"

#include <filesystem>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "bindings/cli/audio_data.h"
#include "engine/data_loader.h"
#include "gtest/gtest.h"
#include "stages/audio/default_pipeline.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/stage_factory.h"
#include "tests/reliability/batch_hashes.h"
#include "tests/testing/pipeline_test_util.h"
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

// Another tar of the same generator: its games (and name) come after the
// data set's.
void WriteAnotherLc0(const std::string& dir, int number) {
  const absl::StatusOr<lc0::GeneratedFiles> written =
      lc0::WriteGames({.seed = 5, .version = 6, .input_format = 1},
                      {.mode = lc0::OutputMode::kTar,
                       .dir = dir,
                       .games = kLc0GamesPerTar,
                       .first_game = kLc0Games + number * kLc0GamesPerTar,
                       .games_per_tar = kLc0GamesPerTar});
  ASSERT_TRUE(written.ok()) << written.status();
}

// A loose chunk that is not gzip (not_gzip).
void WriteDamagedLc0(const std::string& dir) {
  WriteFileAtomically(dir + "/0-damaged.gz", "not a gzip chunk at all");
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

// Another file of 40 clips (another seed), named to sort last.
void WriteAnotherAudio(const std::string& dir, int number) {
  const std::string scratch = absl::StrCat(dir, "/.another-", number);
  cli::AudioDatasetOptions options = AudioOptions(scratch);
  options.clips = 40;
  options.files = 1;
  options.seed = 100 + static_cast<uint64_t>(number);
  absl::StatusOr<cli::AudioDataset> written = cli::WriteAudioDataset(options);
  ASSERT_TRUE(written.ok()) << written.status();
  std::filesystem::rename(
      absl::StrCat(scratch, "/data-00001-of-00001.arrow"),
      absl::StrCat(dir, "/data-zz-another-", number, ".arrow"));
  std::filesystem::remove_all(scratch);
}

// An Arrow file that is not one (not_arrow).
void WriteDamagedAudio(const std::string& dir) {
  WriteFileAtomically(dir + "/0-damaged.arrow", "not an arrow file at all");
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
          .train_batches = UnlessSanitizer<size_t>(50, 20),
          .write_another = WriteAnotherLc0,
          .write_damaged = WriteDamagedLc0,
          .resume_reads_new_files = true,
          .elastic_reservoir = 200,
          .elastic_more_files = UnlessSanitizer(0, 4),
          .train_row_id = ""};
}

CheckpointWorkload AudioWorkload() {
  // About 7 batches a pass (6 under a sanitizer).
  return {.name = "audio",
          .write = WriteAudio,
          .config = AudioConfig,
          .train_batches = UnlessSanitizer<size_t>(30, 20),
          .write_another = WriteAnotherAudio,
          .write_damaged = WriteDamagedAudio,
          .resume_reads_new_files = false,
          // 2 -> 3 ranks: a sixth of what 2 ranks leave of a pass is at
          // least the reservoir and two batches.
          .elastic_reservoir = 8,
          .elastic_more_files = UnlessSanitizer(5, 4),
          .train_row_id = "index"};
}

std::vector<CheckpointWorkload> CheckpointWorkloads() {
  return {Lc0Workload(), AudioWorkload()};
}

void SetReservoir(DataLoaderConfig& config, uint64_t size, uint64_t min_fill) {
  for (StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_shuffling_frame_sampler()) {
      stage.mutable_shuffling_frame_sampler()->set_reservoir_size(size);
      stage.mutable_shuffling_frame_sampler()->set_min_fill(min_fill);
    }
    if (stage.has_shuffle_buffer()) {
      stage.mutable_shuffle_buffer()->set_size(size);
      stage.mutable_shuffle_buffer()->set_min_fill(min_fill);
    }
    if (stage.has_shuffling_chunk_pool() &&
        !stage.shuffling_chunk_pool().single_pass()) {
      stage.mutable_shuffling_chunk_pool()->set_chunk_pool_size(100000);
    }
  }
}

namespace {

template <typename Checkpoints>
std::string RefusalOf(const DataLoaderConfig& config,
                      const Checkpoints& checkpoints) {
  DataLoader loader(CreateStage);
  loader.Configure(config);
  try {
    loader.Resume(checkpoints);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "accepted";
}

}  // namespace

std::string Refusal(const DataLoaderConfig& config,
                    const std::string& checkpoint) {
  return RefusalOf(config, std::string_view(checkpoint));
}

std::string Refusal(const DataLoaderConfig& config,
                    const std::vector<std::string>& checkpoints) {
  return RefusalOf(config, checkpoints);
}

}  // namespace sluice::testing
