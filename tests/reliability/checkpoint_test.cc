// Checkpoint and resume (Pipeline::Checkpoint / Resume) on whole lc0
// pipelines in deterministic mode: a resumed run yields exactly the batches
// the uninterrupted run yielded after the checkpoint, at any thread count,
// chained, taken while the stages run, and from a checkpoint taken before
// any batch; an eval pass resumed mid-way yields every position exactly
// once; damaged, truncated and foreign checkpoints are refused before
// anything starts; a file that is gone at resume is skipped, counted and
// warned about.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/stage_factory.h"
#include "tests/reliability/batch_hashes.h"
#include "tests/reliability/data_set.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lc0::testing::WriteDataSet(5, {.mode = lc0::OutputMode::kTar,
                                   .dir = dir_.path(),
                                   .games = 60,
                                   .games_per_tar = 20});
  }

  DataLoaderConfig Config(lc0::PipelineMode mode) const {
    absl::StatusOr<DataLoaderConfig> config =
        lc0::MakePipeline({.directories = {dir_.path()},
                           .mode = mode,
                           .batch_size = 64,
                           .chunk_pool_size = 40,
                           .reservoir_size = 1500,
                           .min_fill = 500,
                           .seed = 3});
    EXPECT_TRUE(config.ok()) << config.status();
    config->set_deterministic(true);
    SetParallelism(*config, {2, 2});
    return *config;
  }

  testing::TempDir dir_;
};

TEST_F(CheckpointTest, ResumedTrainingYieldsTheBatchesThatFollowed) {
  const DataLoaderConfig config = Config(lc0::PipelineMode::kTrain);
  const std::vector<uint64_t> reference = BatchHashes(config, 50);
  ASSERT_EQ(reference.size(), 50u);
  for (const Shape& shape : {Shape{1, 1}, Shape{4, 3}}) {
    std::string checkpoint;
    {
      RunningLoader first(config);
      ASSERT_EQ(first.Take(17), Slice(reference, 0, 17));
      checkpoint = first.Checkpoint();
      // Batches after the checkpoint do not change it.
      first.Take(5);
    }
    DataLoaderConfig resumed_config = config;
    SetParallelism(resumed_config, shape);  // threads do not matter
    RunningLoader resumed(resumed_config, &checkpoint);
    EXPECT_EQ(resumed.Take(33), Slice(reference, 17, 50))
        << shape.threads << " threads, parallelism " << shape.parallelism;
  }
}

TEST_F(CheckpointTest, CheckpointsChainAndMayBeTakenBeforeAnyBatch) {
  const DataLoaderConfig config = Config(lc0::PipelineMode::kTrain);
  const std::vector<uint64_t> reference = BatchHashes(config, 40);
  std::string at_zero;
  {
    RunningLoader first(config);
    at_zero = first.Checkpoint();
  }
  std::string at_ten, again_at_ten;
  {
    RunningLoader second(config, &at_zero);
    ASSERT_EQ(second.Take(10), Slice(reference, 0, 10));
    at_ten = second.Checkpoint();
  }
  {
    // A checkpoint right after a resume, before any batch, is the same
    // point again.
    RunningLoader third(config, &at_ten);
    again_at_ten = third.Checkpoint();
  }
  RunningLoader fourth(config, &again_at_ten);
  ASSERT_EQ(fourth.Take(15), Slice(reference, 10, 25));
  const std::string at_25 = fourth.Checkpoint();
  RunningLoader fifth(config, &at_25);
  EXPECT_EQ(fifth.Take(15), Slice(reference, 25, 40));
}

TEST_F(CheckpointTest, CheckpointsTakenWhileTheStagesRunAgree) {
  // The sampler takes in chunks (and lets the pool forget them) while a
  // checkpoint walks from the sampler to the pool: each checkpoint must
  // still find what it names.
  const DataLoaderConfig config = Config(lc0::PipelineMode::kTrain);
  const std::vector<uint64_t> reference = BatchHashes(config, 36);
  std::string last;
  {
    RunningLoader first(config);
    for (size_t batch = 0; batch < 30; ++batch) {
      ASSERT_EQ(first.Take(1), Slice(reference, batch, batch + 1));
      last = first.Checkpoint();
    }
  }
  RunningLoader resumed(config, &last);
  EXPECT_EQ(resumed.Take(6), Slice(reference, 30, 36));
}

TEST_F(CheckpointTest, ResumedEvalPassYieldsEveryPositionOnce) {
  const DataLoaderConfig config = Config(lc0::PipelineMode::kEval);
  const std::vector<uint64_t> reference = BatchHashes(config, 0);
  ASSERT_GT(reference.size(), 20u);
  for (const size_t cut :
       {size_t{1}, reference.size() / 2, reference.size() - 1}) {
    std::string checkpoint;
    {
      RunningLoader first(config);
      ASSERT_EQ(first.Take(cut), Slice(reference, 0, cut));
      checkpoint = first.Checkpoint();
    }
    RunningLoader resumed(config, &checkpoint);
    EXPECT_EQ(resumed.Take(0), Slice(reference, cut, reference.size()))
        << "cut after " << cut << " batches";
  }
}

TEST_F(CheckpointTest, DamagedTruncatedOrForeignCheckpointsAreRefused) {
  const DataLoaderConfig config = Config(lc0::PipelineMode::kTrain);
  std::string checkpoint;
  {
    RunningLoader first(config);
    first.Take(3);
    checkpoint = first.Checkpoint();
  }
  const auto refusal = [&](const DataLoaderConfig& with,
                           const std::string& bytes) -> std::string {
    DataLoader loader(CreateStage);
    loader.Configure(with);
    try {
      loader.Resume(bytes);
    } catch (const ConfigError& error) {
      return error.what();
    }
    return "accepted";
  };
  std::string damaged = checkpoint;
  damaged[damaged.size() / 2] ^= 0x20;
  EXPECT_THAT(refusal(config, damaged), HasSubstr("checkpoint"));
  EXPECT_THAT(refusal(config, checkpoint.substr(0, checkpoint.size() - 9)),
              HasSubstr("checkpoint"));
  EXPECT_THAT(refusal(config, ""), HasSubstr("does not parse"));
  EXPECT_THAT(refusal(config, "not a checkpoint at all"),
              HasSubstr("checkpoint"));

  DataLoaderConfig other_seed = config;
  other_seed.set_seed(4);
  EXPECT_THAT(refusal(other_seed, checkpoint),
              AllOf(HasSubstr("another config"), HasSubstr("seed")));
  DataLoaderConfig other_batch = config;
  for (StageConfig& stage : *other_batch.mutable_stage()) {
    if (stage.has_tensor_generator()) {
      stage.mutable_tensor_generator()->set_batch_size(32);
    }
  }
  EXPECT_THAT(refusal(other_batch, checkpoint), HasSubstr("batch_size"));
  // Thread counts and placement are not part of the identity.
  DataLoaderConfig more_threads = config;
  more_threads.set_worker_threads(5);
  more_threads.set_worker_placement(DataLoaderConfig::FLOATING);
  EXPECT_EQ(refusal(more_threads, checkpoint), "accepted");
}

TEST_F(CheckpointTest, APipelineNeitherDeterministicNorResumableIsRefused) {
  DataLoaderConfig config = Config(lc0::PipelineMode::kTrain);
  config.set_deterministic(false);
  RunningLoader loader(config);
  loader.Take(1);
  try {
    loader.Checkpoint();
    FAIL() << "a checkpoint of a pipeline that is not deterministic";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(),
                AllOf(HasSubstr("deterministic"), HasSubstr("resumable")));
  }
}

// Without deterministic mode (resumable: true) the batches of a resumed run
// differ, but an eval pass still yields every position exactly once.
TEST_F(CheckpointTest, ResumableEvalPassRepeatsAndLosesNothing) {
  DataLoaderConfig config = Config(lc0::PipelineMode::kEval);
  config.set_deterministic(false);
  config.set_resumable(true);
  std::vector<uint64_t> every = RunningLoader(config).TakeRows(0);
  ASSERT_GT(every.size(), 1000u);
  std::sort(every.begin(), every.end());
  for (const size_t cut : {size_t{1}, every.size() / 64 / 2}) {
    std::vector<uint64_t> rows;
    std::string checkpoint;
    {
      RunningLoader first(config);
      rows = first.TakeRows(cut);
      checkpoint = first.Checkpoint();
    }
    const std::vector<uint64_t> rest =
        RunningLoader(config, &checkpoint).TakeRows(0);
    rows.insert(rows.end(), rest.begin(), rest.end());
    std::sort(rows.begin(), rows.end());
    EXPECT_EQ(rows, every) << "cut after " << cut << " batches";
  }
}

// ... and a training pass draws no chunk twice: while fewer frames than a
// pass less the reservoir were emitted, every one is a different position,
// across the resume too.
TEST_F(CheckpointTest, ResumableTrainingRepeatsNoPositionWithinAPass) {
  DataLoaderConfig eval = Config(lc0::PipelineMode::kEval);
  std::vector<uint64_t> pass = RunningLoader(eval).TakeRows(0);
  std::sort(pass.begin(), pass.end());
  ASSERT_EQ(std::unique(pass.begin(), pass.end()), pass.end())
      << "the data set's positions must differ for this test";
  const size_t batches = (pass.size() - 1500) / 64;  // reservoir 1500
  ASSERT_GT(batches, 12u);
  DataLoaderConfig config = Config(lc0::PipelineMode::kTrain);
  config.set_deterministic(false);
  config.set_resumable(true);
  for (StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_shuffling_chunk_pool()) {
      stage.mutable_shuffling_chunk_pool()->set_chunk_pool_size(1000);  // all
    }
  }
  std::vector<uint64_t> rows;
  std::string checkpoint;
  {
    RunningLoader first(config);
    rows = first.TakeRows(batches / 3);
    checkpoint = first.Checkpoint();
  }
  RunningLoader resumed(config, &checkpoint);
  const std::vector<uint64_t> rest = resumed.TakeRows(batches - batches / 3);
  rows.insert(rows.end(), rest.begin(), rest.end());
  ASSERT_EQ(rows.size(), batches * 64);
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(std::unique(rows.begin(), rows.end()), rows.end());
  EXPECT_TRUE(
      std::includes(pass.begin(), pass.end(), rows.begin(), rows.end()));
}

TEST_F(CheckpointTest, AFileGoneAtResumeIsSkippedAndCounted) {
  const DataLoaderConfig config = Config(lc0::PipelineMode::kTrain);
  std::string checkpoint;
  {
    RunningLoader first(config);
    first.Take(12);
    checkpoint = first.Checkpoint();
  }
  std::vector<std::filesystem::path> tars;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    tars.push_back(entry.path());
  }
  ASSERT_GE(tars.size(), 2u);
  std::sort(tars.begin(), tars.end());
  std::filesystem::remove(tars.back());
  RunningLoader resumed(config, &checkpoint);
  EXPECT_EQ(resumed.Take(20).size(), 20u);
  const DataLoaderMetricsProto metrics = resumed.loader().GetMetrics();
  uint64_t gone = 0;
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    for (const SkipCountProto& skip : stage.skipped()) {
      if (skip.reason() == "checkpoint_source_gone") gone += skip.count();
    }
  }
  EXPECT_GT(gone, 0u);
}

}  // namespace
}  // namespace sluice
