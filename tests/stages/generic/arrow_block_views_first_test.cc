// Checkpoints of arrow_source -> batcher with block_order VIEWS_FIRST,
// beyond the cases every way of reading the data set runs
// (arrow_block_checkpoint_test.cc): a batch being filled with the block
// ends of several files, in shuffled file order, comes back in its own
// order; a held row whose file is gone or changed at resume is counted and
// left out, without a hang; an elastic resume from old ranks that held
// rows shares them among the new ranks (more than a batch to one).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/data_loader.h"
#include "gtest/gtest.h"
#include "io/arrow/arrow_file_writer.h"
#include "tests/stages/generic/arrow_block_test_data.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice::arrow_block_testing::views_first_test {
namespace {

using testing::SkipsCounted;
using testing::TempDir;

// Training reads the files in a shuffled order, so the batch being filled
// gathers block ends of several files out of the order in which the source
// reads held rows again (by file, then row): the resumed batcher puts them
// back in their own order, and the batches go on as uninterrupted.
TEST(ArrowBlockViewsFirstTest, HeldRowsOfSeveralFilesComeBackInTheirOrder) {
  for (const SourceKind& kind :
       {kViewsFirstRecordBatches, kViewsFirstBlocksOf16}) {
    TempDir dir;
    WriteData(dir, kind);
    const DataLoaderConfig config = Config(dir, kind, "TRAIN");
    const size_t total = 30;
    const std::vector<Row> reference = TakeRows(*Started(config), total);
    size_t out_of_order = 0;
    for (size_t cut = 1; cut < total; ++cut) {
      std::string checkpoint;
      {
        std::unique_ptr<DataLoader> first = Started(config);
        TakeRows(*first, cut);
        checkpoint = first->Checkpoint();
      }
      const std::vector<ItemRef> held = HeldRows(checkpoint);
      EXPECT_LT(held.size(), kBatchSize) << kind.name << " " << cut;
      if (FilesOf(held).size() < 2 ||
          std::is_sorted(held.begin(), held.end())) {
        continue;
      }
      ++out_of_order;
      EXPECT_EQ(TakeRows(*Started(config, {checkpoint}), total - cut),
                std::vector<Row>(reference.begin() + kBatchSize * cut,
                                 reference.end()))
          << kind.name << ", cut after batch " << cut;
    }
    EXPECT_GE(out_of_order, 1u)
        << kind.name
        << ": no checkpoint held block ends of several files out of the "
           "source's order";
  }
}

// A held row whose file is gone (eval) or changed (training) at resume is
// counted and left out; the run goes on to its end (eval) or with full
// batches (training), and no row of that file comes back.
TEST(ArrowBlockViewsFirstTest, AHeldRowOfAFileGoneOrChangedIsCounted) {
  for (const std::string mode : {"EVAL", "TRAIN"}) {
    TempDir dir;
    WriteData(dir, kViewsFirstRecordBatches);
    const DataLoaderConfig config = Config(dir, kViewsFirstRecordBatches, mode);
    std::string checkpoint;
    std::vector<ItemRef> held;
    std::vector<Row> before;
    for (size_t cut = 1; cut < 13 && held.empty(); ++cut) {
      std::unique_ptr<DataLoader> first = Started(config);
      before = TakeRows(*first, cut);
      checkpoint = first->Checkpoint();
      held = HeldRows(checkpoint);
    }
    ASSERT_FALSE(held.empty()) << mode << ": no checkpoint held a row";
    // The file of the first held row, and how many held rows it has.
    const uint32_t file = static_cast<uint32_t>(held.front().unit);
    uint64_t lost = 0;
    for (const ItemRef& ref : held) {
      if (static_cast<uint32_t>(ref.unit) == file) ++lost;
    }
    const std::string path =
        dir / (std::string(1, static_cast<char>('a' + file)) + ".arrow");
    int64_t first_row = 0;  // the file's first index
    for (uint32_t f = 0; f < file; ++f) {
      for (const int64_t rows : kFiles[f]) first_row += rows;
    }
    int64_t file_rows = 0;
    for (const int64_t rows : kFiles[file]) file_rows += rows;
    if (mode == "EVAL") {
      ASSERT_TRUE(std::filesystem::remove(path));
    } else {
      // Rewritten with another row count.
      absl::StatusOr<std::unique_ptr<io::arrow::ArrowFileWriter>> writer =
          io::arrow::ArrowFileWriter::Create(path,
                                             {io::arrow::Int64Column("label")});
      ASSERT_TRUE(writer.ok()) << writer.status();
      const std::vector<int64_t> labels = {0, 10};
      ASSERT_TRUE((*writer)->WriteRecordBatch(2, {{.int64 = labels}}).ok());
      ASSERT_TRUE((*writer)->Finish().ok());
    }
    std::unique_ptr<DataLoader> resumed = Started(config, {checkpoint});
    const std::vector<Row> after = TakeRows(*resumed, mode == "EVAL" ? 0 : 10);
    if (mode == "TRAIN") {
      EXPECT_EQ(after.size(), 10 * kBatchSize);
    }
    resumed->Stop();
    EXPECT_EQ(SkipsCounted(resumed->GetMetrics(), "checkpoint_example_missing"),
              lost)
        << mode;
    for (const Row& row : after) {
      EXPECT_FALSE(row.index >= first_row && row.index < first_row + file_rows)
          << mode << ": row " << row.index << " of the file gone or changed";
    }
    if (mode == "EVAL") {
      // Every other row once: those delivered before, the held ones of
      // other files and the rest of the pass.
      std::vector<Row> rows = before;
      rows.insert(rows.end(), after.begin(), after.end());
      std::vector<int64_t> expected;
      for (const int64_t row : GoodRows(kViewsFirstRecordBatches)) {
        const bool of_file = row >= first_row && row < first_row + file_rows;
        const bool delivered =
            std::any_of(before.begin(), before.end(),
                        [&](const Row& r) { return r.index == row; });
        if (!of_file || delivered) expected.push_back(row);
      }
      EXPECT_EQ(SortedIndexes(rows), expected);
    }
  }
}

// Per old rank of `ranks`, the cut (1 to 4 batches) after which its
// batcher holds the most rows (the first of equals); `held` gets how many,
// by rank.
std::vector<size_t> CutsWithHeldRows(const DataLoaderConfig& config,
                                     uint32_t ranks,
                                     std::vector<size_t>& held) {
  std::vector<size_t> cuts;
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    size_t best = 1;
    size_t most = 0;
    for (size_t cut = 1; cut <= 4; ++cut) {
      std::unique_ptr<DataLoader> loader = Started(OfRank(config, rank, ranks));
      TakeRows(*loader, cut);
      const size_t rows = HeldRows(loader->Checkpoint()).size();
      if (rows > most) {
        best = cut;
        most = rows;
      }
    }
    held.push_back(most);
    cuts.push_back(best);
  }
  return cuts;
}

// An elastic resume from old ranks that held rows: every new rank
// takes its share of them first (eval 3 -> 1: more than a batch, the first
// batch of held rows only); eval delivers every row no old rank delivered
// once, training repeats no row of the interrupted pass, and a new rank's
// batches are the same each time it resumes from the same checkpoints.
TEST(ArrowBlockViewsFirstTest, ElasticResumeSharesTheHeldRows) {
  const SourceKind& kind = kViewsFirstRecordBatches;
  TempDir dir;
  WriteData(dir, kind);
  for (const std::string mode : {"EVAL", "TRAIN"}) {
    const DataLoaderConfig config = Config(dir, kind, mode);
    for (const RankCounts counts :
         {RankCounts{3, 1}, RankCounts{3, 2}, RankCounts{2, 3}}) {
      const std::string what =
          absl::StrCat(mode, " ", counts.old_ranks, " -> ", counts.new_ranks);
      std::vector<size_t> held;
      const std::vector<size_t> cuts =
          CutsWithHeldRows(config, counts.old_ranks, held);
      const size_t held_rows = std::accumulate(held.begin(), held.end(), 0);
      ASSERT_GT(held_rows, 0u) << what;
      if (mode == "EVAL" && counts.new_ranks == 1) {
        ASSERT_GT(held_rows, kBatchSize) << what;
      }
      std::vector<std::string> checkpoints;
      std::vector<Row> rows;
      for (const Row& row : RunOldRanks(config, cuts, checkpoints)) {
        if (row.pass == 0) rows.push_back(row);
      }
      const size_t batches = mode == "EVAL" ? 0 : kRows / kBatchSize + 2;
      const std::vector<std::vector<Row>> resumed =
          RunNewRanks(config, counts.new_ranks, checkpoints, batches);
      for (const std::vector<Row>& rank_rows : resumed) {
        for (const Row& row : rank_rows) {
          if (row.pass == 0) rows.push_back(row);
        }
      }
      EXPECT_EQ(SortedIndexes(rows), GoodRows(kind)) << what;
      EXPECT_EQ(RunNewRanks(config, counts.new_ranks, checkpoints, batches),
                resumed)
          << what;
    }
  }
}

}  // namespace
}  // namespace sluice::arrow_block_testing::views_first_test
