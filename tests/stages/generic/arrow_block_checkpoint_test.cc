// Checkpoints of arrow_source -> batcher in deterministic mode, with the
// source's output in blocks (ROW_BLOCKS: a block per run of good rows of a
// record batch, or blocks of block_rows read straight from the file) and,
// as the reference, one Example per row; and with the batcher's
// block_order VIEWS_FIRST (views first, the rows left at block ends
// gathered and copied: its batches are its own). For each: a checkpoint
// after any batch (inside a block, at a block's end, at the end of a pass,
// before any batch of a resumed run) resumes with the batches an
// uninterrupted run gives (block_order IN_ORDER: those of the EXAMPLES
// output); an eval pass delivers every row once across the resume; an
// elastic resume 2 -> 3, 3 -> 2 and 2 -> 1 ranks delivers every row no old
// rank delivered once (eval) and repeats no row within the interrupted
// pass (training), its batches a function of the checkpoints; without
// deterministic mode (resumable) an eval pass still loses and repeats
// nothing. An EXAMPLES checkpoint is refused by a ROW_BLOCKS config
// (another config), while its source state resumes blocks as it resumes
// examples. VIEWS_FIRST's own cases: arrow_block_views_first_test.cc.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/data_loader.h"
#include "engine/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/stage_factory.h"
#include "tests/stages/generic/arrow_block_test_data.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice::arrow_block_testing::checkpoint_test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::TempDir;

class ArrowBlockCheckpointTest : public ::testing::TestWithParam<SourceKind> {};

// The cuts after which a test checkpoints: IN_ORDER, inside blocks
// (record batches of 17 and 23 rows; blocks of 7), at blocks' ends (blocks
// of a batch), at a pass's last full batch and in the second pass;
// VIEWS_FIRST, after every batch (views, batches of gathered rows, with
// and without rows held).
std::vector<size_t> Cuts(const SourceKind& kind, size_t batches) {
  if (!ViewsFirst(kind)) return {1, 4, 9, 13, 20};
  std::vector<size_t> cuts;
  for (size_t cut = 1; cut < batches; ++cut) cuts.push_back(cut);
  return cuts;
}

// Eval: 14 batches (the last of 2 or 7 rows); training: 30 batches, more
// than two passes.
TEST_P(ArrowBlockCheckpointTest, ResumesWithTheBatchesOfAnUninterruptedRun) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  for (const std::string mode : {"EVAL", "TRAIN"}) {
    const size_t total = mode == "EVAL" ? 0 : 30;
    const DataLoaderConfig config = Config(dir, kind, mode);
    const std::vector<Row> reference = TakeRows(*Started(config), total);
    SourceKind examples = kind;
    examples.output = "EXAMPLES";
    examples.block_rows = 0;
    examples.block_order = "IN_ORDER";
    const std::vector<Row> in_order =
        TakeRows(*Started(Config(dir, examples, mode)), total);
    if (!ViewsFirst(kind) || kind.name == kViewsFirstBlocksOfABatch.name) {
      EXPECT_EQ(reference, in_order)
          << mode << ": the batches of the EXAMPLES output";
    } else {
      EXPECT_NE(reference, in_order)
          << mode << ": VIEWS_FIRST leaves the rows in the input's order";
    }
    if (mode == "EVAL") {
      EXPECT_EQ(SortedIndexes(reference), GoodRows(kind));
    } else {
      ASSERT_EQ(reference.size(), total * kBatchSize);
      EXPECT_EQ(reference.back().pass, 2u);
    }
    const size_t batches = (reference.size() + kBatchSize - 1) / kBatchSize;
    for (const size_t cut : Cuts(kind, batches)) {
      if (mode == "EVAL" && cut >= batches) continue;
      const std::vector<Row> before(reference.begin(),
                                    reference.begin() + kBatchSize * cut);
      const std::vector<Row> after(reference.begin() + kBatchSize * cut,
                                   reference.end());
      std::string checkpoint;
      {
        std::unique_ptr<DataLoader> first = Started(config);
        ASSERT_EQ(TakeRows(*first, cut), before) << mode << " " << cut;
        checkpoint = first->Checkpoint();
        TakeRows(*first, 2);  // batches after the checkpoint change nothing
      }
      EXPECT_EQ(TakeRows(*Started(config, {checkpoint}),
                         total == 0 ? 0 : total - cut),
                after)
          << mode << ", cut after batch " << cut;
    }
  }
}

// A checkpoint of a resumed run taken before it hands out a batch resumes
// as the checkpoint it resumed from (VIEWS_FIRST: with the same rows
// held).
TEST_P(ArrowBlockCheckpointTest, ACheckpointBeforeAnyBatchOfAResumedRun) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  const DataLoaderConfig config = Config(dir, kind, "TRAIN");
  const size_t total = 20;
  const std::vector<Row> reference = TakeRows(*Started(config), total);
  for (const size_t cut : {3, 7}) {
    std::string checkpoint;
    {
      std::unique_ptr<DataLoader> first = Started(config);
      TakeRows(*first, cut);
      checkpoint = first->Checkpoint();
    }
    std::string again;
    {
      std::unique_ptr<DataLoader> resumed = Started(config, {checkpoint});
      // Time for the source to begin its stream, so that the checkpoint
      // finds it under way (it must resume as well before).
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      again = resumed->Checkpoint();
      TakeRows(*resumed, 2);
    }
    EXPECT_EQ(
        TakeRows(*Started(config, {again}), total - cut),
        std::vector<Row>(reference.begin() + kBatchSize * cut, reference.end()))
        << "cut after batch " << cut;
  }
}

// A checkpoint taken just as the batcher has consumed a whole pass resumes
// into the next pass.
TEST_P(ArrowBlockCheckpointTest, ACheckpointAtTheEndOfAPassResumesIntoTheNext) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  const std::vector<int64_t> good = GoodRows(kind);
  const DataLoaderConfig config = Config(dir, kind, "TRAIN", good.size());
  std::string checkpoint;
  {
    std::unique_ptr<DataLoader> first = Started(config);
    const std::vector<Row> pass = TakeRows(*first, 1);
    ASSERT_EQ(SortedIndexes(pass), good);
    checkpoint = first->Checkpoint();
  }
  const std::vector<Row> next = TakeRows(*Started(config, {checkpoint}), 1);
  EXPECT_EQ(SortedIndexes(next), good);
  for (const Row& row : next) EXPECT_EQ(row.pass, 1u) << row.index;
}

// Without deterministic mode (resumable: true) an eval pass delivers every
// row once across a resume.
TEST_P(ArrowBlockCheckpointTest, ResumableEvalPassRepeatsAndLosesNothing) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  DataLoaderConfig config = Config(dir, kind, "EVAL");
  config.set_deterministic(false);
  config.set_resumable(true);
  std::string checkpoint;
  std::vector<Row> rows;
  {
    std::unique_ptr<DataLoader> first = Started(config);
    rows = TakeRows(*first, 6);
    checkpoint = first->Checkpoint();
  }
  const std::vector<Row> after = TakeRows(*Started(config, {checkpoint}), 0);
  rows.insert(rows.end(), after.begin(), after.end());
  EXPECT_EQ(SortedIndexes(rows), GoodRows(kind));
}

// 2 -> 1 reads blocks of block_rows straight from the files (one rank).
constexpr RankCounts kRankCounts[] = {{2, 3}, {3, 2}, {2, 1}};

// Each old rank stops inside its share (of 45 rows or more) after 1 to 3
// batches.
std::vector<size_t> OldCuts(uint32_t ranks) {
  std::vector<size_t> cuts;
  for (uint32_t rank = 0; rank < ranks; ++rank) cuts.push_back(1 + rank % 3);
  return cuts;
}

TEST_P(ArrowBlockCheckpointTest, ElasticEvalDeliversEveryRowOnce) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  const DataLoaderConfig config = Config(dir, kind, "EVAL");
  for (const RankCounts counts : kRankCounts) {
    std::vector<std::string> checkpoints;
    std::vector<Row> rows =
        RunOldRanks(config, OldCuts(counts.old_ranks), checkpoints);
    for (const std::vector<Row>& rank_rows :
         RunNewRanks(config, counts.new_ranks, checkpoints, 0)) {
      rows.insert(rows.end(), rank_rows.begin(), rank_rows.end());
    }
    EXPECT_EQ(SortedIndexes(rows), GoodRows(kind))
        << counts.old_ranks << " -> " << counts.new_ranks << " ranks";
  }
}

// Training: within the interrupted pass (pass 0) every row is delivered
// once, by an old rank or a new one, and a new rank's batches are the same
// each time it resumes from the same checkpoints.
TEST_P(ArrowBlockCheckpointTest, ElasticTrainingRepeatsNoRowOfThePass) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  const DataLoaderConfig config = Config(dir, kind, "TRAIN");
  for (const RankCounts counts : kRankCounts) {
    std::vector<std::string> checkpoints;
    std::vector<Row> pass_rows =
        RunOldRanks(config, OldCuts(counts.old_ranks), checkpoints);
    // Enough batches per new rank to finish the pass.
    const size_t batches = kRows / kBatchSize + 2;
    const std::vector<std::vector<Row>> resumed =
        RunNewRanks(config, counts.new_ranks, checkpoints, batches);
    for (const std::vector<Row>& rank_rows : resumed) {
      for (const Row& row : rank_rows) {
        if (row.pass == 0) pass_rows.push_back(row);
      }
    }
    EXPECT_EQ(SortedIndexes(pass_rows), GoodRows(kind))
        << counts.old_ranks << " -> " << counts.new_ranks << " ranks";
    EXPECT_EQ(RunNewRanks(config, counts.new_ranks, checkpoints, batches),
              resumed)
        << counts.old_ranks << " -> " << counts.new_ranks << " ranks";
  }
}

INSTANTIATE_TEST_SUITE_P(Outputs, ArrowBlockCheckpointTest,
                         ::testing::Values(kExamples, kRecordBatchBlocks,
                                           kBlocksOf7, kBlocksOfABatch,
                                           kViewsFirstRecordBatches,
                                           kViewsFirstBlocksOf16,
                                           kViewsFirstBlocksOfABatch),
                         [](const ::testing::TestParamInfo<SourceKind>& info) {
                           return info.param.name;
                         });

// An EXAMPLES checkpoint: a config with output ROW_BLOCKS is another
// config, refused naming the field; the source's state is the same for
// both outputs, so the checkpoint with its config's output changed resumes
// with the batches that followed.
TEST(ArrowBlockCheckpointRefusalTest, AnExamplesCheckpointAndBlocks) {
  TempDir dir;
  WriteData(dir, kExamples);
  const DataLoaderConfig examples = Config(dir, kExamples, "TRAIN");
  const DataLoaderConfig blocks = Config(dir, kRecordBatchBlocks, "TRAIN");
  const std::vector<Row> reference = TakeRows(*Started(examples), 20);
  std::string checkpoint;
  {
    std::unique_ptr<DataLoader> first = Started(examples);
    TakeRows(*first, 7);
    checkpoint = first->Checkpoint();
  }
  DataLoader refusing(CreateStage);
  refusing.Configure(blocks);
  try {
    refusing.Resume(checkpoint);
    ADD_FAILURE() << "an EXAMPLES checkpoint resumed a ROW_BLOCKS config";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(),
                AllOf(HasSubstr("another config"), HasSubstr("output")));
  }
  absl::StatusOr<LoaderCheckpoint> parsed = ParseCheckpoint(checkpoint);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  parsed->mutable_config()
      ->mutable_stage(1)
      ->mutable_arrow_source()
      ->set_output(ArrowSourceConfig::ROW_BLOCKS);
  EXPECT_EQ(
      TakeRows(*Started(blocks, {SerializeCheckpoint(*parsed)}), 13),
      std::vector<Row>(reference.begin() + 7 * kBatchSize, reference.end()));
}

}  // namespace
}  // namespace sluice::arrow_block_testing::checkpoint_test
