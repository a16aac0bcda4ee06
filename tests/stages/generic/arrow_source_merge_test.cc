// arrow_source's elastic-resume merge: over random old and new rank counts,
// stream points and runs left by an earlier elastic resume, the new ranks'
// runs hold every row no old rank had read of its interrupted pass exactly
// once, each rank within a row per piece of its part; the stream goes on
// after the furthest interrupted pass; restores keep their references;
// old ranks that had not surveyed count as at the start of pass 0; all
// unsurveyed starts afresh; different data sets are refused, naming the
// ranks and the file.
#include "stages/generic/internal/arrow_source_merge.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/rank_shard.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/generic/internal/arrow_dataset.h"

namespace sluice {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A row of a pass: (pass, file number, row).
using Row = std::tuple<uint64_t, uint32_t, int64_t>;

ArrowSourceCheckpoint DataSet(const std::vector<int64_t>& rows) {
  ArrowSourceCheckpoint state;
  state.set_started(true);
  for (size_t i = 0; i < rows.size(); ++i) {
    ArrowSourceCheckpoint::File& file = *state.add_file();
    file.set_path(absl::StrCat("/data/part-", i, ".arrow"));
    file.set_rows(rows[i]);
    file.set_size(1000 + i);
  }
  return state;
}

std::vector<std::string> Serialized(
    const std::vector<ArrowSourceCheckpoint>& states) {
  std::vector<std::string> out;
  for (const ArrowSourceCheckpoint& state : states) {
    out.push_back(state.SerializeAsString());
  }
  return out;
}

void AddRows(const ArrowSourceCheckpoint::RowRun& run, std::vector<Row>& rows) {
  for (int64_t row = run.begin(); row < run.end(); ++row) {
    rows.emplace_back(run.pass(), run.file(), row);
  }
}

// What old rank `k` of `ranks` with `state` had not read of its
// interrupted pass: its runs, then its shard from its stream point on.
std::vector<Row> Unread(const ArrowSourceCheckpoint& state, uint32_t k,
                        uint32_t ranks, const ArrowPassOrder& order) {
  std::vector<Row> rows;
  for (const ArrowSourceCheckpoint::RowRun& run : state.rest_of_pass()) {
    AddRows(run, rows);
  }
  const ArrowDataset dataset = SavedDataSet(state);
  const std::vector<const ArrowDatasetFile*> files =
      FilesOfPass(dataset, order.train, order.seed + state.pass());
  for (uint64_t slot = state.slot(); slot < files.size(); ++slot) {
    const ArrowDatasetFile& file = *files[slot];
    const RowRange shard =
        RowsOfRank(std::filesystem::path(file.path).filename().string(),
                   static_cast<uint64_t>(file.rows), k, ranks);
    for (auto row = static_cast<int64_t>(shard.begin);
         row < static_cast<int64_t>(shard.end); ++row) {
      if (slot == state.slot() && row < state.row()) continue;
      rows.emplace_back(state.pass(), file.number, row);
    }
  }
  return rows;
}

TEST(ArrowSourceMergeTest, RandomRanksAndPointsSplitTheRestOfThePassOnce) {
  std::mt19937 random(11);
  const std::vector<int64_t> file_rows = {37, 5, 0, 64, 1, 23};
  for (int trial = 0; trial < 200; ++trial) {
    const auto old_ranks = static_cast<uint32_t>(1 + random() % 4);
    const auto new_ranks = static_cast<uint32_t>(1 + random() % 4);
    const ArrowPassOrder order{.train = trial % 2 == 0, .seed = 5};
    std::vector<ArrowSourceCheckpoint> old;
    std::vector<Row> expected;
    uint64_t furthest = 0;
    for (uint32_t k = 0; k < old_ranks; ++k) {
      ArrowSourceCheckpoint state = DataSet(file_rows);
      state.set_pass(order.train ? 2 + random() % 2 : 0);
      state.set_slot(random() % (file_rows.size() + 1));
      state.set_row(static_cast<int64_t>(random() % 40));
      if (random() % 3 == 0) {  // runs left by an earlier elastic resume
        ArrowSourceCheckpoint::RowRun& run = *state.add_rest_of_pass();
        run.set_pass(1);
        run.set_file(static_cast<uint32_t>(random() % file_rows.size()));
        run.set_begin(4 * static_cast<int64_t>(k));  // disjoint
        run.set_end(run.begin() + 1 + static_cast<int64_t>(random() % 3));
        if (run.end() > file_rows[run.file()]) run.set_end(run.begin());
      }
      furthest = std::max(furthest, state.pass());
      const std::vector<Row> unread = Unread(state, k, old_ranks, order);
      expected.insert(expected.end(), unread.begin(), unread.end());
      old.push_back(std::move(state));
    }
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ": " << old_ranks
                                      << " -> " << new_ranks);
    std::vector<Row> merged_rows;
    size_t pieces = 0;
    std::vector<size_t> shares;
    for (uint32_t rank = 0; rank < new_ranks; ++rank) {
      absl::StatusOr<ArrowSourceCheckpoint> merged =
          MergeArrowSourceStates(Serialized(old), {}, order, rank, new_ranks);
      ASSERT_TRUE(merged.ok()) << merged.status();
      EXPECT_EQ(merged->pass(), furthest);
      EXPECT_EQ(merged->slot(), file_rows.size());
      EXPECT_EQ(merged->row(), 0);
      std::vector<Row> mine;
      for (const ArrowSourceCheckpoint::RowRun& run : merged->rest_of_pass()) {
        AddRows(run, mine);
      }
      shares.push_back(mine.size());
      pieces = std::max<size_t>(pieces, merged->rest_of_pass_size());
      merged_rows.insert(merged_rows.end(), mine.begin(), mine.end());
    }
    std::sort(expected.begin(), expected.end());
    std::sort(merged_rows.begin(), merged_rows.end());
    EXPECT_EQ(merged_rows, expected);
    // Each rank within a row per piece (an old rank's part of a file) of
    // its part.
    const size_t pieces_bound = old_ranks * (file_rows.size() + 1);
    for (const size_t share : shares) {
      EXPECT_LE(share, expected.size() / new_ranks + pieces_bound);
      EXPECT_GE(share + pieces_bound, expected.size() / new_ranks);
    }
  }
}

TEST(ArrowSourceMergeTest, RestoresKeepTheirReferences) {
  const ArrowSourceCheckpoint state = DataSet({10, 10});
  const ElasticRequest request{
      .restore = {{.rank = 1, .ref = {.unit = 3ull << 32 | 1, .index = 7}},
                  {.rank = 0, .ref = {.unit = 2ull << 32, .index = 2}}}};
  absl::StatusOr<ArrowSourceCheckpoint> merged = MergeArrowSourceStates(
      Serialized({state, state}), request, {.train = true}, 0, 3);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->restore().unit_size(), 2);
  EXPECT_EQ(merged->restore().unit(0), 3ull << 32 | 1);
  EXPECT_EQ(merged->restore().index(0), 7u);
  EXPECT_EQ(merged->restore().unit(1), 2ull << 32);
  EXPECT_EQ(merged->restore().index(1), 2u);
}

TEST(ArrowSourceMergeTest, AnOldRankThatHadNotSurveyedReadsItsWholeShard) {
  ArrowSourceCheckpoint done = DataSet({8, 8});
  done.set_slot(2);  // read all of its shard of pass 0
  ArrowSourceCheckpoint unsurveyed;
  unsurveyed.set_started(false);
  absl::StatusOr<ArrowSourceCheckpoint> merged =
      MergeArrowSourceStates(Serialized({done, unsurveyed}), {}, {}, 0, 1);
  ASSERT_TRUE(merged.ok()) << merged.status();
  std::vector<Row> rows;
  for (const ArrowSourceCheckpoint::RowRun& run : merged->rest_of_pass()) {
    AddRows(run, rows);
  }
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, Unread(DataSet({8, 8}), 1, 2, {}));
  EXPECT_EQ(rows.size(), 8u);

  absl::StatusOr<ArrowSourceCheckpoint> fresh = MergeArrowSourceStates(
      Serialized({unsurveyed, unsurveyed}), {}, {}, 0, 3);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_FALSE(fresh->started());
}

TEST(ArrowSourceMergeTest, DifferentDataSetsAreRefused) {
  const ArrowSourceCheckpoint a = DataSet({8, 8});
  ArrowSourceCheckpoint b = DataSet({8, 9});
  EXPECT_THAT(MergeArrowSourceStates(Serialized({a, a, b}), {}, {}, 0, 2)
                  .status()
                  .message(),
              AllOf(HasSubstr("ranks 0 and 2"), HasSubstr("file 1"),
                    HasSubstr("part-1.arrow"), HasSubstr("9 rows")));
  EXPECT_THAT(
      MergeArrowSourceStates(Serialized({a, DataSet({8})}), {}, {}, 0, 2)
          .status()
          .message(),
      HasSubstr("2 files against 1"));
  EXPECT_THAT(
      MergeArrowSourceStates({a.SerializeAsString(), "\xff"}, {}, {}, 0, 2)
          .status()
          .message(),
      HasSubstr("rank 1 does not parse"));
}

}  // namespace
}  // namespace sluice
