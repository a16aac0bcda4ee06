// The chunk pool's part of an elastic resume, without I/O threads: the
// windows of N old ranks (each its shard of the same tars, some chunks
// drawn), merged for every rank of M. The new ranks' passes are disjoint,
// each within its new shard, and together hold exactly the chunks no old
// rank had drawn; every old replay goes to exactly one new rank (the first
// of each old rank's with its skip), except the chunks an old rank had
// drawn ahead into its next pass; restores name the chunks the old
// references named; the merged window draws its pass; random N, M and
// draws keep all of it.
#include "stages/lc0/internal/chunk_pool_merge.h"

#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/rank_shard.h"
#include "gtest/gtest.h"
#include "tests/stages/lc0/chunk_test_util.h"

namespace sluice::lc0 {
namespace {

using testing::ChunkTar;
using testing::OpenIndexed;
using testing::TempDir;
using testing::WriteFile;

// A chunk by its file and index in it.
using Key = std::pair<std::string, uint64_t>;

Key KeyOf(const ChunkSource& source, size_t local_index) {
  return {source.name(), source.location(local_index).index_in_source};
}

// The source record of `window` holding `number`, and its source.
Key KeyIn(const ChunkPoolMerge::Result& merged, uint64_t number) {
  for (const ChunkPoolCheckpoint::Source& source : merged.window.source()) {
    if (number >= source.base() && number < source.base() + source.size()) {
      const auto& view = merged.sources.at(source.base());
      return KeyOf(*view, number - source.base());
    }
  }
  ADD_FAILURE() << "no source holds chunk " << number;
  return {};
}

struct OldRank {
  ChunkPoolCheckpoint saved;
  std::set<Key> undrawn;
  std::vector<std::pair<uint64_t, Key>> drawn;  // number, chunk
};

// Rank k of `world_size` adds its shard of `files`, draws `draws` chunks
// and saves; its last two draws are replays (the first with 3 frames
// taken), the one before is named by a reference.
OldRank RunOldRank(const std::vector<std::shared_ptr<ChunkSource>>& files,
                   uint32_t k, uint32_t world_size, int draws) {
  OldRank old;
  ChunkWindow window(/*capacity=*/100000, /*single_pass=*/false, k + 1);
  const ChunkWindow::View view{.rank = k, .world_size = world_size};
  for (const auto& file : files) {
    std::shared_ptr<const ChunkSource> shard = ViewOf(file, view);
    for (size_t j = 0; j < shard->size(); ++j) {
      old.undrawn.insert(KeyOf(*shard, j));
    }
    window.Add(shard, view);
  }
  for (int i = 0; i < draws; ++i) {
    std::optional<ChunkWindow::Draw> draw = window.Next();
    if (!draw || draw->pass > 0) break;
    const Key key = KeyOf(*draw->source, draw->local_index);
    old.undrawn.erase(key);
    old.drawn.emplace_back(draw->number, key);
  }
  window.Save(&old.saved);
  old.saved.set_started(true);
  const size_t drawn = old.drawn.size();
  for (size_t i = drawn >= 2 ? drawn - 2 : 0; i < drawn; ++i) {
    ChunkPoolCheckpoint::Replay& replay = *old.saved.add_replay();
    replay.set_chunk(old.drawn[i].first);
  }
  return old;
}

// Tars t0.tar, t1.tar, ... in `dir` of `first` + f * `step` chunks,
// indexed whole, in name order and by name.
struct Tars {
  std::vector<std::shared_ptr<ChunkSource>> files;
  std::map<std::string, std::shared_ptr<const ChunkSource>, std::less<>>
      by_name;
};
Tars WriteTars(const TempDir& dir, int count, int first, int step) {
  Tars tars;
  for (int f = 0; f < count; ++f) {
    const std::string path = dir / absl::StrCat("t", f, ".tar");
    WriteFile(path, ChunkTar(first + step * f, 1000 * f));
    tars.files.push_back(OpenIndexed(path));
    tars.by_name[tars.files.back()->name()] = tars.files.back();
  }
  return tars;
}

TEST(ChunkPoolMergeTest, NewRanksSplitWhatTheOldRanksLeft) {
  TempDir dir;
  const auto [files, by_name] = WriteTars(dir, 3, 40, 13);
  std::mt19937 random(5);
  for (int trial = 0; trial < 12; ++trial) {
    const auto old_ranks = static_cast<uint32_t>(1 + random() % 4);
    const auto new_ranks = static_cast<uint32_t>(1 + random() % 4);
    SCOPED_TRACE(::testing::Message() << old_ranks << " -> " << new_ranks);
    std::vector<OldRank> olds;
    std::vector<ChunkPoolCheckpoint> saved;
    std::set<Key> undrawn;
    std::set<Key> replayed;
    ElasticRequest request;
    std::map<std::pair<uint32_t, uint64_t>, Key> referenced;
    for (uint32_t k = 0; k < old_ranks; ++k) {
      olds.push_back(
          RunOldRank(files, k, old_ranks, static_cast<int>(3 + random() % 30)));
      saved.push_back(olds.back().saved);
      undrawn.insert(olds.back().undrawn.begin(), olds.back().undrawn.end());
      const auto& drawn = olds.back().drawn;
      for (size_t i = drawn.size() >= 2 ? drawn.size() - 2 : 0;
           i < drawn.size(); ++i) {
        replayed.insert(drawn[i].second);
      }
      if (drawn.size() >= 3) {
        const auto& [number, key] = drawn[drawn.size() - 3];
        request.restore.push_back({k, {.unit = number, .index = 7}});
        referenced[{k, number}] = key;
      }
      request.skip.push_back(3);
    }
    std::set<Key> pending_all, replays_all;
    for (uint32_t rank = 0; rank < new_ranks; ++rank) {
      ChunkPoolMerge merge(saved, rank, new_ranks);
      ASSERT_TRUE(merge.started());
      merge.Request(request);
      const ChunkPoolMerge::Result merged =
          merge.Resolve(by_name, /*capacity=*/100000, /*single_pass=*/false);
      EXPECT_TRUE(merged.gone.empty());
      EXPECT_TRUE(merged.changed.empty());
      std::set<Key> pending;
      for (const uint64_t number : merged.window.pending()) {
        const Key key = KeyIn(merged, number);
        EXPECT_EQ(ChunkRank(key.first, key.second, new_ranks), rank);
        EXPECT_TRUE(pending.insert(key).second);
        EXPECT_TRUE(pending_all.insert(key).second) << "in two new passes";
      }
      // The merged window draws exactly its pass, then starts the next.
      ChunkWindow window(100000, false, 1);
      window.Restore(merged.window,
                     [&](const ChunkPoolCheckpoint::Source& source) {
                       return merged.sources.at(source.base());
                     });
      std::set<Key> drawn;
      for (size_t i = 0; i < pending.size(); ++i) {
        std::optional<ChunkWindow::Draw> draw = window.Next();
        ASSERT_TRUE(draw.has_value());
        drawn.insert(KeyOf(*draw->source, draw->local_index));
      }
      EXPECT_EQ(drawn, pending);
      for (const ChunkPoolMerge::Read& replay : merged.replays) {
        ASSERT_NE(replay.source, nullptr);
        const Key key = KeyOf(*replay.source, replay.local_index);
        EXPECT_EQ(ChunkRank(key.first, key.second, new_ranks), rank);
        EXPECT_TRUE(replays_all.insert(key).second) << "replayed twice";
      }
      for (const ChunkPoolMerge::Read& restore : merged.restores) {
        ASSERT_NE(restore.source, nullptr);
        bool found = false;
        for (const auto& [old, key] : referenced) {
          if (merge.Translate(old.first, old.second) != restore.number) {
            continue;
          }
          EXPECT_EQ(KeyOf(*restore.source, restore.local_index), key);
          found = true;
        }
        EXPECT_TRUE(found) << "restore of chunk " << restore.number;
        EXPECT_EQ(restore.records, std::vector<uint32_t>{7});
      }
      EXPECT_EQ(merged.restores.size(), referenced.size());
    }
    EXPECT_EQ(pending_all, undrawn);
    EXPECT_EQ(replays_all, replayed);
  }
}

TEST(ChunkPoolMergeTest, ChunksDrawnAheadIntoTheNextPassAreLeftOut) {
  TempDir dir;
  const auto [files, by_name] = WriteTars(dir, 2, 20, 7);
  // Each old rank draws all of its pass 0 and 3 chunks of pass 1; its
  // reservoir was taking in the second last chunk of pass 0, so its last 5
  // draws are replays.
  constexpr uint32_t kOldRanks = 2;
  std::vector<ChunkPoolCheckpoint> saved;
  std::set<Key> interrupted_replays;
  for (uint32_t k = 0; k < kOldRanks; ++k) {
    ChunkWindow window(/*capacity=*/100000, /*single_pass=*/false, k + 1);
    const ChunkWindow::View view{.rank = k, .world_size = kOldRanks};
    size_t shard = 0;
    for (const auto& file : files) {
      std::shared_ptr<const ChunkSource> mine = ViewOf(file, view);
      shard += mine->size();
      window.Add(mine, view);
    }
    std::vector<ChunkWindow::Draw> draws;
    for (size_t i = 0; i < shard + 3; ++i) draws.push_back(*window.Next());
    ASSERT_EQ(draws.back().pass, 1u);
    ChunkPoolCheckpoint old;
    window.Save(&old);
    old.set_started(true);
    ASSERT_EQ(old.pass(), 1u);
    for (size_t i = draws.size() - 5; i < draws.size(); ++i) {
      ChunkPoolCheckpoint::Replay& replay = *old.add_replay();
      replay.set_chunk(draws[i].number);
      replay.set_pass(draws[i].pass);
      if (draws[i].pass == 0) {
        interrupted_replays.insert(
            KeyOf(*draws[i].source, draws[i].local_index));
      }
    }
    saved.push_back(std::move(old));
  }
  ASSERT_EQ(interrupted_replays.size(), 2 * kOldRanks);
  for (const uint32_t new_ranks : {1u, 3u}) {
    SCOPED_TRACE(::testing::Message() << kOldRanks << " -> " << new_ranks);
    std::set<Key> replays_all;
    for (uint32_t rank = 0; rank < new_ranks; ++rank) {
      ChunkPoolMerge merge(saved, rank, new_ranks);
      merge.Request({.skip = std::vector<uint32_t>(kOldRanks, 0)});
      const ChunkPoolMerge::Result merged =
          merge.Resolve(by_name, 100000, false);
      // Pass 0 was drawn whole: nothing of it is left to draw.
      EXPECT_EQ(merged.window.pending_size(), 0);
      EXPECT_EQ(merged.window.pass(), 0u);
      for (const ChunkPoolMerge::Read& replay : merged.replays) {
        EXPECT_EQ(replay.pass, 0u);
        replays_all.insert(KeyOf(*replay.source, replay.local_index));
      }
    }
    EXPECT_EQ(replays_all, interrupted_replays);
  }
}

TEST(ChunkPoolMergeTest, FilesGoneOrChangedAreLeftOutAndReported) {
  TempDir dir;
  std::vector<std::shared_ptr<ChunkSource>> files;
  for (int f = 0; f < 2; ++f) {
    const std::string path = dir / absl::StrCat("t", f, ".tar");
    WriteFile(path, ChunkTar(30, 1000 * f));
    files.push_back(OpenIndexed(path));
  }
  std::vector<ChunkPoolCheckpoint> saved = {RunOldRank(files, 0, 2, 5).saved,
                                            RunOldRank(files, 1, 2, 5).saved};
  // t0.tar is gone; t1.tar has other chunks now.
  const std::string path = dir / "t1.tar";
  WriteFile(path, ChunkTar(31, 5000));
  std::map<std::string, std::shared_ptr<const ChunkSource>, std::less<>>
      by_name = {{"t1.tar", OpenIndexed(path)}};
  ChunkPoolMerge merge(saved, 0, 1);
  const ChunkPoolMerge::Result merged = merge.Resolve(by_name, 100000, false);
  EXPECT_EQ(merged.gone, std::vector<std::string>{"t0.tar"});
  EXPECT_EQ(merged.changed, std::vector<std::string>{"t1.tar"});
  EXPECT_EQ(merged.gone_chunks, 30u);
  EXPECT_EQ(merged.changed_chunks, 30u);
  EXPECT_EQ(merged.window.pending_size(), 0);
}

}  // namespace
}  // namespace sluice::lc0
