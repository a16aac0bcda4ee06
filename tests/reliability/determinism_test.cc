// Deterministic mode (DataLoaderConfig.deterministic) and ranks
// (rank / world_size) on whole pipelines: the lc0 train and eval pipelines
// and the audio train and eval pipelines give the same batches, byte for
// byte, at every thread count and stage parallelism; the ranks of an eval
// pass partition the data exactly.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "bindings/cli/audio_data.h"
#include "engine/data_loader.h"
#include "engine/stable_hash.h"
#include "engine/typed_batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/audio/default_pipeline.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/stage_factory.h"
#include "tests/reliability/batch_hashes.h"
#include "tests/reliability/data_set.h"
#include "tests/testing/pipeline_test_util.h"
#include "tests/testing/sanitizers.h"

namespace sluice {
namespace {

using ::sluice::testing::UnlessSanitizer;
using ::testing::HasSubstr;

// Under a sanitizer the lc0 tests run on a third of the games with a
// reservoir to match, and take fewer train batches.
constexpr int kLc0GamesPerTar = UnlessSanitizer(20, 7);  // 3 tars
constexpr uint64_t kLc0Reservoir = UnlessSanitizer(1500, 600);
constexpr uint64_t kLc0MinFill = UnlessSanitizer(500, 200);
constexpr size_t kLc0TrainBatches = UnlessSanitizer<size_t>(60, 24);

class Lc0DeterminismTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const absl::StatusOr<lc0::GeneratedFiles> written =
        lc0::WriteGames({.seed = 7, .version = 6, .input_format = 1},
                        {.mode = lc0::OutputMode::kTar,
                         .dir = dir_->path(),
                         .games = 3 * kLc0GamesPerTar,
                         .games_per_tar = kLc0GamesPerTar});
    ASSERT_TRUE(written.ok()) << written.status();
  }
  static void TearDownTestSuite() { delete dir_; }

  static DataLoaderConfig Config(lc0::PipelineMode mode) {
    absl::StatusOr<DataLoaderConfig> config =
        lc0::MakePipeline({.directories = {dir_->path()},
                           .mode = mode,
                           .batch_size = 64,
                           .reservoir_size = kLc0Reservoir,
                           .min_fill = kLc0MinFill,
                           .seed = 11});
    EXPECT_TRUE(config.ok()) << config.status();
    config->set_deterministic(true);
    return *config;
  }

  static testing::TempDir* dir_;
};
testing::TempDir* Lc0DeterminismTest::dir_ = nullptr;

TEST_F(Lc0DeterminismTest, TrainBatchesAreTheSameAtAnyThreadCount) {
  std::vector<uint64_t> first;
  for (const Shape& shape : kShapes) {
    DataLoaderConfig config = Config(lc0::PipelineMode::kTrain);
    SetParallelism(config, shape);
    const std::vector<uint64_t> hashes = BatchHashes(config, kLc0TrainBatches);
    ASSERT_EQ(hashes.size(), kLc0TrainBatches);
    if (first.empty()) {
      first = hashes;
      // Not all the same batch: the data does flow (over 5 in 6 differ).
      EXPECT_GT(std::set<uint64_t>(hashes.begin(), hashes.end()).size(),
                kLc0TrainBatches * 5 / 6);
    } else {
      EXPECT_EQ(hashes, first)
          << shape.threads << " threads, parallelism " << shape.parallelism;
    }
  }
}

TEST_F(Lc0DeterminismTest, EvalBatchesAreTheSameAtAnyThreadCount) {
  std::vector<uint64_t> first;
  for (const Shape& shape : kShapes) {
    DataLoaderConfig config = Config(lc0::PipelineMode::kEval);
    SetParallelism(config, shape);
    const std::vector<uint64_t> hashes = BatchHashes(config, 0);
    ASSERT_FALSE(hashes.empty());
    if (first.empty()) {
      first = hashes;
    } else {
      EXPECT_EQ(hashes, first)
          << shape.threads << " threads, parallelism " << shape.parallelism;
    }
  }
}

TEST_F(Lc0DeterminismTest, AnotherSeedGivesOtherBatches) {
  DataLoaderConfig config = Config(lc0::PipelineMode::kTrain);
  const std::vector<uint64_t> seeded = BatchHashes(config, 10);
  config.set_seed(12);
  EXPECT_NE(BatchHashes(config, 10), seeded);
}

TEST_F(Lc0DeterminismTest, RanksOfAnEvalPassPartitionThePositions) {
  lc0::testing::HashCounts all;
  {
    DataLoader loader(CreateStage);
    loader.Configure(Config(lc0::PipelineMode::kEval));
    loader.Start();
    lc0::testing::CountPositions(loader, "", &all);
  }
  for (uint32_t world_size : {2u, 3u}) {
    lc0::testing::HashCounts together;
    for (uint32_t rank = 0; rank < world_size; ++rank) {
      DataLoaderConfig config = Config(lc0::PipelineMode::kEval);
      config.set_rank(rank);
      config.set_world_size(world_size);
      DataLoader loader(CreateStage);
      loader.Configure(config);
      loader.Start();
      lc0::testing::HashCounts shard;
      lc0::testing::CountPositions(loader, "", &shard);
      EXPECT_FALSE(shard.empty()) << "rank " << rank << " of " << world_size;
      for (const auto& [hash, count] : shard) {
        EXPECT_EQ(together.count(hash), 0u)
            << "a position in two shards of " << world_size;
      }
      lc0::testing::AddCounts(shard, &together);
    }
    EXPECT_EQ(together, all) << "world_size " << world_size;
  }
}

TEST(RankConfigTest, RankMustBeBelowWorldSizeAndSomeStageMustShard) {
  testing::TempDir dir;
  absl::StatusOr<DataLoaderConfig> config = lc0::MakePipeline(
      {.directories = {dir.path()}, .mode = lc0::PipelineMode::kEval});
  ASSERT_TRUE(config.ok());
  config->set_world_size(2);
  config->set_rank(2);
  DataLoader loader(CreateStage);
  try {
    loader.Configure(*config);
    FAIL() << "rank 2 of 2 was accepted";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("'rank' (2) must be below world_size"));
  }
  DataLoader counting(CreateStage);
  try {
    counting.Configure(testing::ParseConfig(
        "world_size: 2 stage { name: 'n' counting_source { count: 3 } }"));
    FAIL() << "a pipeline that cannot shard was accepted";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no stage of this pipeline reads a "
                                        "shard"));
  }
}

// Under a sanitizer the audio tests run on half the clips in batches
// of 8 with a shuffle buffer to match, and take fewer train batches.
constexpr int64_t kAudioClips = UnlessSanitizer<int64_t>(120, 60);
constexpr uint64_t kAudioShuffleBuffer = UnlessSanitizer(64, 32);
constexpr size_t kAudioTrainBatches = UnlessSanitizer<size_t>(20, 10);

class AudioDeterminismTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    absl::StatusOr<cli::AudioDataset> written =
        cli::WriteAudioDataset({.dir = dir_->path(),
                                .clips = kAudioClips,
                                .classes = 4,
                                .files = 2,
                                .rows_per_batch = 16,
                                .corrupt_every = 30});
    ASSERT_TRUE(written.ok()) << written.status();
  }
  static void TearDownTestSuite() { delete dir_; }

  static DataLoaderConfig Config(audio::PipelineMode mode) {
    absl::StatusOr<DataLoaderConfig> config =
        audio::MakePipeline({.directories = {dir_->path()},
                             .mode = mode,
                             .clip_seconds = 0.25,
                             .n_mels = 16,
                             .batch_size = UnlessSanitizer(16u, 8u),
                             .shuffle_buffer = kAudioShuffleBuffer,
                             .min_fill = 16,
                             .seed = 3});
    EXPECT_TRUE(config.ok()) << config.status();
    config->set_deterministic(true);
    return *config;
  }

  static testing::TempDir* dir_;
};
testing::TempDir* AudioDeterminismTest::dir_ = nullptr;

TEST_F(AudioDeterminismTest, TrainAndEvalBatchesAreTheSameAtAnyThreadCount) {
  for (audio::PipelineMode mode :
       {audio::PipelineMode::kTrain, audio::PipelineMode::kEval}) {
    const size_t limit =
        mode == audio::PipelineMode::kTrain ? kAudioTrainBatches : 0;
    std::vector<uint64_t> first;
    for (const Shape& shape : kShapes) {
      DataLoaderConfig config = Config(mode);
      SetParallelism(config, shape);
      const std::vector<uint64_t> hashes = BatchHashes(config, limit);
      ASSERT_FALSE(hashes.empty());
      if (first.empty()) {
        first = hashes;
      } else {
        EXPECT_EQ(hashes, first)
            << (mode == audio::PipelineMode::kTrain ? "train" : "eval") << ", "
            << shape.threads << " threads, parallelism " << shape.parallelism;
      }
    }
  }
}

// The `index` values of every batch of an eval pass.
std::multiset<int64_t> EvalIndexes(const DataLoaderConfig& config) {
  DataLoader loader(CreateStage);
  loader.Configure(config);
  loader.Start();
  std::multiset<int64_t> indexes;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    const BatchTensor* index = batch->Find("index");
    EXPECT_NE(index, nullptr);
    if (index == nullptr) break;
    const auto* values = static_cast<const int64_t*>(index->data);
    indexes.insert(values, values + batch->size());
  }
  loader.Stop();
  return indexes;
}

TEST_F(AudioDeterminismTest, RanksOfAnEvalPassPartitionTheClips) {
  const std::multiset<int64_t> all =
      EvalIndexes(Config(audio::PipelineMode::kEval));
  ASSERT_GT(all.size(), size_t{kAudioClips * 5 / 6});  // less the damaged
  for (uint32_t world_size : {2u, 3u}) {
    std::multiset<int64_t> together;
    for (uint32_t rank = 0; rank < world_size; ++rank) {
      DataLoaderConfig config = Config(audio::PipelineMode::kEval);
      config.set_rank(rank);
      config.set_world_size(world_size);
      const std::multiset<int64_t> shard = EvalIndexes(config);
      // Each rank's share, within a clip per file (and the damaged ones).
      EXPECT_NEAR(static_cast<double>(shard.size()),
                  static_cast<double>(all.size()) / world_size, 6.0)
          << "rank " << rank << " of " << world_size;
      together.insert(shard.begin(), shard.end());
    }
    EXPECT_EQ(together, all) << "world_size " << world_size;
  }
}

}  // namespace
}  // namespace sluice
