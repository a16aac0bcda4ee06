// Checkpoint and resume of the audio pipelines (arrow_source ->
// audio_decoder -> crop_or_pad -> spectrogram -> shuffle_buffer -> batcher)
// in deterministic mode: a resumed train run yields exactly the batches the
// uninterrupted run yielded after the checkpoint, at any thread count and
// across passes; checkpoints chain and may be taken while the stages run
// or before any batch; an eval pass resumed mid-way yields every clip
// exactly once, also without deterministic mode (resumable); a file gone
// at resume is skipped and counted.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bindings/cli/audio_data.h"
#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "gtest/gtest.h"
#include "stages/audio/default_pipeline.h"
#include "tests/reliability/batch_hashes.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

class AudioCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<cli::AudioDataset> written =
        cli::WriteAudioDataset({.dir = dir_.path(),
                                .clips = 120,
                                .classes = 4,
                                .files = 3,
                                .rows_per_batch = 16,
                                .corrupt_every = 30});
    ASSERT_TRUE(written.ok()) << written.status();
  }

  DataLoaderConfig Config(audio::PipelineMode mode) const {
    absl::StatusOr<DataLoaderConfig> config =
        audio::MakePipeline({.directories = {dir_.path()},
                             .mode = mode,
                             .clip_seconds = 0.25,
                             .n_mels = 16,
                             .batch_size = 16,
                             .shuffle_buffer = 64,
                             .min_fill = 16,
                             .seed = 3});
    EXPECT_TRUE(config.ok()) << config.status();
    config->set_deterministic(true);
    SetParallelism(*config, {2, 2});
    return *config;
  }

  testing::TempDir dir_;
};

TEST_F(AudioCheckpointTest, ResumedTrainingYieldsTheBatchesThatFollowed) {
  const DataLoaderConfig config = Config(audio::PipelineMode::kTrain);
  // About 7 batches a pass: the runs cross passes.
  const std::vector<uint64_t> reference = BatchHashes(config, 30);
  ASSERT_EQ(reference.size(), 30u);
  for (const Shape& shape : {Shape{1, 1}, Shape{4, 3}}) {
    std::string checkpoint;
    {
      RunningLoader first(config);
      ASSERT_EQ(first.Take(9), Slice(reference, 0, 9));
      checkpoint = first.Checkpoint();
      first.Take(3);  // batches after the checkpoint do not change it
    }
    DataLoaderConfig resumed_config = config;
    SetParallelism(resumed_config, shape);
    RunningLoader resumed(resumed_config, &checkpoint);
    EXPECT_EQ(resumed.Take(21), Slice(reference, 9, 30))
        << shape.threads << " threads, parallelism " << shape.parallelism;
  }
}

TEST_F(AudioCheckpointTest, CheckpointsChainAndMayBeTakenAnyTime) {
  const DataLoaderConfig config = Config(audio::PipelineMode::kTrain);
  const std::vector<uint64_t> reference = BatchHashes(config, 24);
  std::string at_zero;
  {
    RunningLoader first(config);
    at_zero = first.Checkpoint();
  }
  std::string at_twelve;
  {
    // One after each batch, while the stages run ahead.
    RunningLoader second(config, &at_zero);
    for (size_t batch = 0; batch < 12; ++batch) {
      ASSERT_EQ(second.Take(1), Slice(reference, batch, batch + 1));
      at_twelve = second.Checkpoint();
    }
  }
  std::string again_at_twelve;
  {
    RunningLoader third(config, &at_twelve);
    again_at_twelve = third.Checkpoint();
  }
  RunningLoader fourth(config, &again_at_twelve);
  EXPECT_EQ(fourth.Take(12), Slice(reference, 12, 24));
}

TEST_F(AudioCheckpointTest, ResumedEvalPassYieldsEveryClipOnce) {
  const DataLoaderConfig config = Config(audio::PipelineMode::kEval);
  const std::vector<uint64_t> reference = BatchHashes(config, 0);
  ASSERT_GT(reference.size(), 5u);
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

// The `index` values of the next `count` batches (0: all).
std::vector<int64_t> TakeIndexes(DataLoader& loader, size_t count) {
  std::vector<int64_t> indexes;
  for (size_t taken = 0; count == 0 || taken < count; ++taken) {
    std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
    if (!batch) break;
    const BatchTensor* index = batch->Find("index");
    EXPECT_NE(index, nullptr);
    if (index == nullptr) break;
    const auto* values = static_cast<const int64_t*>(index->data);
    indexes.insert(indexes.end(), values, values + batch->size());
  }
  return indexes;
}

TEST_F(AudioCheckpointTest, ResumableEvalPassRepeatsAndLosesNothing) {
  DataLoaderConfig config = Config(audio::PipelineMode::kEval);
  config.set_deterministic(false);
  config.set_resumable(true);
  std::vector<int64_t> every = TakeIndexes(RunningLoader(config).loader(), 0);
  ASSERT_GT(every.size(), 100u);
  std::sort(every.begin(), every.end());
  std::vector<int64_t> indexes;
  std::string checkpoint;
  {
    RunningLoader first(config);
    indexes = TakeIndexes(first.loader(), 3);
    checkpoint = first.Checkpoint();
  }
  RunningLoader resumed(config, &checkpoint);
  const std::vector<int64_t> rest = TakeIndexes(resumed.loader(), 0);
  indexes.insert(indexes.end(), rest.begin(), rest.end());
  std::sort(indexes.begin(), indexes.end());
  EXPECT_EQ(indexes, every);
}

TEST_F(AudioCheckpointTest, AFileGoneAtResumeIsSkippedAndCounted) {
  const DataLoaderConfig config = Config(audio::PipelineMode::kTrain);
  std::string checkpoint;
  {
    RunningLoader first(config);
    first.Take(5);
    checkpoint = first.Checkpoint();
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    files.push_back(entry.path());
  }
  ASSERT_EQ(files.size(), 3u);
  std::sort(files.begin(), files.end());
  std::filesystem::remove(files.back());
  RunningLoader resumed(config, &checkpoint);
  EXPECT_EQ(resumed.Take(10).size(), 10u);
  uint64_t gone = 0;
  const DataLoaderMetricsProto metrics = resumed.loader().GetMetrics();
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    for (const SkipCountProto& skip : stage.skipped()) {
      if (skip.reason() == "checkpoint_source_gone") gone += skip.count();
    }
  }
  EXPECT_EQ(gone, 1u);
}

}  // namespace
}  // namespace sluice
