#include "engine/rank_shard.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

// Chunks per rank of `containers` containers of `per_container` chunks.
std::vector<int64_t> ChunkShares(int containers, int per_container,
                                 uint32_t world_size) {
  std::vector<int64_t> shares(world_size);
  for (int c = 0; c < containers; ++c) {
    const std::string name = per_container == 1
                                 ? absl::StrCat("training.", 1000000 + c, ".gz")
                                 : absl::StrCat("training-run1-test80-202501",
                                                10 + c % 20, "-", c, ".tar");
    for (int i = 0; i < per_container; ++i) {
      const uint32_t rank = ChunkRank(name, i, world_size);
      EXPECT_LT(rank, world_size);
      ++shares[rank];
    }
  }
  return shares;
}

TEST(RankShardTest, TenThousandChunksSplitWithinTwoPercent) {
  // Loose one-chunk files spread by their names' hashes; chunks of tars go
  // round the ranks. 2 % of each rank's share.
  for (int per_container : {1, 500}) {
    for (uint32_t world_size : {2u, 4u}) {
      const std::vector<int64_t> shares =
          ChunkShares(10000 / per_container, per_container, world_size);
      const double share = 10000.0 / world_size;
      for (uint32_t rank = 0; rank < world_size; ++rank) {
        EXPECT_NEAR(static_cast<double>(shares[rank]), share, 0.02 * share)
            << per_container << " chunks per file, rank " << rank << " of "
            << world_size;
      }
    }
  }
}

TEST(RankShardTest, ChunksOfOneContainerAreWithinOneOfTheirShare) {
  const std::vector<int64_t> shares = ChunkShares(1, 1001, 3);
  for (int64_t share : shares) EXPECT_NEAR(share, 1001 / 3.0, 1.0);
}

TEST(RankShardTest, RowsOfAFileAreContiguousRunsWithinOneOfTheirShare) {
  for (uint64_t rows : {1u, 2u, 7u, 1000u, 1001u}) {
    for (uint32_t world_size : {1u, 2u, 3u, 8u}) {
      std::vector<int64_t> shares(world_size);
      int changes = 0;
      for (uint64_t row = 0; row < rows; ++row) {
        const uint32_t rank =
            RowRank("data-00000-of-00004.arrow", row, rows, world_size);
        ASSERT_LT(rank, world_size);
        ++shares[rank];
        if (row > 0 && rank != RowRank("data-00000-of-00004.arrow", row - 1,
                                       rows, world_size)) {
          ++changes;
        }
      }
      for (int64_t share : shares) {
        EXPECT_NEAR(static_cast<double>(share),
                    static_cast<double>(rows) / world_size, 1.0)
            << rows << " rows, world_size " << world_size;
      }
      // One run per rank.
      EXPECT_LE(changes, static_cast<int>(world_size) - 1) << rows << " rows";
    }
  }
}

TEST(RankShardTest, RowsOfRankAreExactlyTheRowsRowRankGivesIt) {
  for (uint64_t rows : {1u, 2u, 7u, 1000u, 1001u}) {
    for (uint32_t world_size : {1u, 2u, 3u, 8u}) {
      for (uint32_t rank = 0; rank < world_size; ++rank) {
        const RowRange mine = RowsOfRank("clips.arrow", rows, rank, world_size);
        for (uint64_t row = 0; row < rows; ++row) {
          EXPECT_EQ(row >= mine.begin && row < mine.end,
                    RowRank("clips.arrow", row, rows, world_size) == rank)
              << "row " << row << " of " << rows << ", rank " << rank << " of "
              << world_size;
        }
      }
    }
  }
}

TEST(RankShardTest, SmallFilesStartAtDifferentRanks) {
  std::vector<int> first_rank(4);
  for (int f = 0; f < 40; ++f) {
    ++first_rank[RowRank(absl::StrCat("clip-", f, ".arrow"), 0, 1, 4)];
  }
  for (int count : first_rank) EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace sluice
