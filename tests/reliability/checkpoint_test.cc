// Checkpoint and resume (Pipeline::Checkpoint / Resume) of whole pipelines
// in deterministic mode, the same tests on both workloads (lc0 and audio,
// tests/reliability/checkpoint_workloads.h): a resumed run yields exactly
// the batches the uninterrupted run yielded after the checkpoint, at any
// thread count and across passes; checkpoints chain and may be taken while
// the stages run or before any batch; an eval pass resumed mid-way yields
// every example exactly once, also without deterministic mode (resumable);
// a file gone at resume is skipped and counted; a checkpoint of an older
// format is refused. Then lc0's own: damaged, truncated and foreign
// checkpoints are refused before anything starts, naming the difference; a
// resumable training pass repeats no position.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "engine/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/reliability/batch_hashes.h"
#include "tests/reliability/checkpoint_workloads.h"
#include "tests/testing/pipeline_test_util.h"
#include "tests/testing/sanitizers.h"

namespace sluice {
namespace {

using ::sluice::testing::CheckpointWorkload;
using ::sluice::testing::Pass;
using ::sluice::testing::Refusal;
using ::testing::AllOf;
using ::testing::HasSubstr;

class CheckpointTest : public ::testing::TestWithParam<CheckpointWorkload> {
 protected:
  void SetUp() override { GetParam().write(dir_.path()); }

  DataLoaderConfig Config(Pass pass) const {
    return GetParam().config(dir_.path(), pass);
  }

  testing::TempDir dir_;
};

TEST_P(CheckpointTest, ResumedTrainingYieldsTheBatchesThatFollowed) {
  const DataLoaderConfig config = Config(Pass::kTrain);
  const size_t total = GetParam().train_batches;
  const size_t cut = total / 3;
  const std::vector<uint64_t> reference = BatchHashes(config, total);
  ASSERT_EQ(reference.size(), total);
  for (const Shape& shape : {Shape{1, 1}, Shape{4, 3}}) {
    std::string checkpoint;
    {
      RunningLoader first(config);
      ASSERT_EQ(first.Take(cut), Slice(reference, 0, cut));
      checkpoint = first.Checkpoint();
      first.Take(3);  // batches after the checkpoint do not change it
    }
    DataLoaderConfig resumed_config = config;
    SetParallelism(resumed_config, shape);  // threads do not matter
    RunningLoader resumed(resumed_config, &checkpoint);
    EXPECT_EQ(resumed.Take(total - cut), Slice(reference, cut, total))
        << shape.threads << " threads, parallelism " << shape.parallelism;
  }
}

TEST_P(CheckpointTest, CheckpointsChainAndMayBeTakenAnyTime) {
  const DataLoaderConfig config = Config(Pass::kTrain);
  const size_t half = GetParam().train_batches * 2 / 5;
  const std::vector<uint64_t> reference = BatchHashes(config, 2 * half);
  std::string at_zero;
  {
    RunningLoader first(config);
    at_zero = first.Checkpoint();
  }
  std::string at_half;
  {
    // One after each batch, while the stages run ahead (the reservoir
    // takes in items and lets its input forget them while a checkpoint
    // walks upstream: each must still find what it names).
    RunningLoader second(config, &at_zero);
    for (size_t batch = 0; batch < half; ++batch) {
      ASSERT_EQ(second.Take(1), Slice(reference, batch, batch + 1));
      at_half = second.Checkpoint();
    }
  }
  std::string again_at_half;
  {
    // A checkpoint right after a resume, before any batch, is the same
    // point again.
    RunningLoader third(config, &at_half);
    again_at_half = third.Checkpoint();
  }
  RunningLoader fourth(config, &again_at_half);
  EXPECT_EQ(fourth.Take(half), Slice(reference, half, 2 * half));
}

TEST_P(CheckpointTest, ResumedEvalPassYieldsEveryExampleOnce) {
  const DataLoaderConfig config = Config(Pass::kEval);
  const std::vector<uint64_t> reference = BatchHashes(config, 0);
  ASSERT_GT(reference.size(), 5u);
  // The last cut is after the whole pass (its last batch is short): the
  // resumed run ends at once.
  for (const size_t cut : {size_t{1}, reference.size() / 2,
                           reference.size() - 1, reference.size()}) {
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

// Without deterministic mode (resumable: true) the batches of a resumed run
// differ, but an eval pass still yields every example exactly once.
TEST_P(CheckpointTest, ResumableEvalPassRepeatsAndLosesNothing) {
  DataLoaderConfig config = Config(Pass::kEval);
  config.set_deterministic(false);
  config.set_resumable(true);
  std::vector<uint64_t> every = RunningLoader(config).TakeRows(0);
  ASSERT_GT(every.size(), testing::UnlessSanitizer<size_t>(100, 40));
  std::sort(every.begin(), every.end());
  const size_t batches = RunningLoader(config).Take(0).size();
  for (const size_t cut : {size_t{1}, batches / 2}) {
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

TEST_P(CheckpointTest, AFileGoneAtResumeIsSkippedAndCounted) {
  const DataLoaderConfig config = Config(Pass::kTrain);
  std::string checkpoint;
  {
    RunningLoader first(config);
    first.Take(GetParam().train_batches / 4);
    checkpoint = first.Checkpoint();
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    files.push_back(entry.path());
  }
  ASSERT_GE(files.size(), 2u);
  std::sort(files.begin(), files.end());
  std::filesystem::remove(files.back());
  RunningLoader resumed(config, &checkpoint);
  EXPECT_EQ(resumed.Take(10).size(), 10u);
  EXPECT_GT(testing::SkipsCounted(resumed.loader().GetMetrics(),
                                  "checkpoint_source_gone"),
            0u);
}

TEST_P(CheckpointTest, ACheckpointOfAnOlderFormatIsRefusedNamingBoth) {
  const DataLoaderConfig config = Config(Pass::kTrain);
  std::string checkpoint;
  {
    RunningLoader first(config);
    first.Take(2);
    checkpoint = first.Checkpoint();
  }
  absl::StatusOr<LoaderCheckpoint> parsed = ParseCheckpoint(checkpoint);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->format(), 3u);
  parsed->set_format(2);
  EXPECT_THAT(Refusal(config, SerializeCheckpoint(*parsed)),
              AllOf(HasSubstr("format 2"), HasSubstr("format 3")));
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, CheckpointTest,
    ::testing::ValuesIn(testing::CheckpointWorkloads()),
    [](const ::testing::TestParamInfo<CheckpointWorkload>& info) {
      return info.param.name;
    });

// lc0's own.
class Lc0CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override { workload_.write(dir_.path()); }

  DataLoaderConfig Config(Pass pass) const {
    return workload_.config(dir_.path(), pass);
  }

  const CheckpointWorkload workload_ = testing::Lc0Workload();
  testing::TempDir dir_;
};

TEST_F(Lc0CheckpointTest, DamagedTruncatedOrForeignCheckpointsAreRefused) {
  const DataLoaderConfig config = Config(Pass::kTrain);
  std::string checkpoint;
  {
    RunningLoader first(config);
    first.Take(3);
    checkpoint = first.Checkpoint();
  }
  std::string damaged = checkpoint;
  damaged[damaged.size() / 2] ^= 0x20;
  EXPECT_THAT(Refusal(config, damaged), HasSubstr("checkpoint"));
  EXPECT_THAT(Refusal(config, checkpoint.substr(0, checkpoint.size() - 9)),
              HasSubstr("checkpoint"));
  EXPECT_THAT(Refusal(config, ""), HasSubstr("does not parse"));
  EXPECT_THAT(Refusal(config, "not a checkpoint at all"),
              HasSubstr("checkpoint"));

  DataLoaderConfig other_seed = config;
  other_seed.set_seed(4);
  EXPECT_THAT(Refusal(other_seed, checkpoint),
              AllOf(HasSubstr("another config"), HasSubstr("seed")));
  DataLoaderConfig other_batch = config;
  for (StageConfig& stage : *other_batch.mutable_stage()) {
    if (stage.has_tensor_generator()) {
      stage.mutable_tensor_generator()->set_batch_size(32);
    }
  }
  EXPECT_THAT(Refusal(other_batch, checkpoint), HasSubstr("batch_size"));
  // Thread counts and placement are not part of the identity.
  DataLoaderConfig more_threads = config;
  more_threads.set_worker_threads(5);
  more_threads.set_worker_placement(DataLoaderConfig::FLOATING);
  EXPECT_EQ(Refusal(more_threads, checkpoint), "accepted");
}

TEST_F(Lc0CheckpointTest, APipelineNeitherDeterministicNorResumableIsRefused) {
  DataLoaderConfig config = Config(Pass::kTrain);
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

// Without deterministic mode (resumable: true) a training pass draws no
// chunk twice: while fewer frames than a pass less the reservoir were
// emitted, every one is a different position, across the resume too.
TEST_F(Lc0CheckpointTest, ResumableTrainingRepeatsNoPositionWithinAPass) {
  DataLoaderConfig eval = Config(Pass::kEval);
  std::vector<uint64_t> pass = RunningLoader(eval).TakeRows(0);
  std::sort(pass.begin(), pass.end());
  ASSERT_EQ(std::unique(pass.begin(), pass.end()), pass.end())
      << "the data set's positions must differ for this test";
  DataLoaderConfig config = Config(Pass::kTrain);
  uint64_t reservoir = 0, batch_size = 0;
  for (const StageConfig& stage : config.stage()) {
    if (stage.has_shuffling_frame_sampler()) {
      reservoir = stage.shuffling_frame_sampler().reservoir_size();
    }
    if (stage.has_tensor_generator()) {
      batch_size = stage.tensor_generator().batch_size();
    }
  }
  ASSERT_GT(pass.size(), reservoir);
  ASSERT_GT(batch_size, 0u);
  const size_t batches = (pass.size() - reservoir) / batch_size;
  ASSERT_GT(batches, 12u);
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
  ASSERT_EQ(rows.size(), batches * batch_size);
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(std::unique(rows.begin(), rows.end()), rows.end());
  EXPECT_TRUE(
      std::includes(pass.begin(), pass.end(), rows.begin(), rows.end()));
}

}  // namespace
}  // namespace sluice
