// ChunkPoolMerge: the shuffling chunk pool's part of an elastic resume
// (engine/checkpoint.h): the states that the pools of N old ranks saved,
// merged into the state of new rank `rank` of `world_size`. A pure function
// of those states, the rank, the world size and the files as they are
// indexed at resume, so every new rank computes its share alone.
//
//   ChunkPoolMerge merge(old_states, rank, world_size);
//   resume.translate = [&](uint32_t k, uint64_t n) {
//     return merge.Translate(k, n); };
//   merge.Request(request_from_the_sampler);
//   ... once every file the old states name is indexed (whole files):
//   ChunkPoolMerge::Result merged = merge.Resolve(files, capacity,
//                                                 single_pass);
//
// What a new rank takes:
// - The window: every source in an old window, each as this rank's view of
//   its file (engine/rank_shard.h ChunkRank with world_size), in name
//   order, the newest `capacity` chunks of it (all in single-pass mode).
// - The pass: the chunks that no old rank had drawn in its interrupted
//   pass yet and that fall to this rank (all of an old rank's shard when
//   its pool had not started). An old rank's interrupted pass is the one
//   its window was in when it drew its first replay (the chunk its
//   reservoir was taking in); a window that has drawn that whole pass and
//   gone on into the next leaves nothing of it undrawn. The pass number is
//   the furthest interrupted one.
// - Replays: the chunks an old rank had drawn in its interrupted pass that
//   its reservoir had not wholly taken in, where they fall to this rank;
//   the first of each old rank's leaves out the frames that reservoir had
//   taken (`skip`). Chunks drawn ahead into a later pass are left out:
//   the merged window's next pass draws them again.
// - Restores: the chunks holding the records the stage below asked for
//   (its share of the old reservoirs), read from the old ranks' views.
// Chunk numbers: every source record of every old state keeps its view
// and is numbered first (old rank by old rank, in listed order), so the
// references of old rank k become Translate(k, n); the new window's
// sources follow. Files gone or changed since (another size, or another
// chunk count of a view) are left out and reported.
#ifndef SLUICE_STAGES_LC0_INTERNAL_CHUNK_POOL_MERGE_H_
#define SLUICE_STAGES_LC0_INTERNAL_CHUNK_POOL_MERGE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/checkpoint.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/lc0/chunk.h"
#include "stages/lc0/internal/chunk_window.h"

namespace sluice::lc0 {

// The indexed view of `file` (an indexed source of a whole file) that
// holds the chunks `view` names (`file` itself for a view of all).
std::shared_ptr<const ChunkSource> ViewOf(
    const std::shared_ptr<const ChunkSource>& file, ChunkWindow::View view);

// The view a saved source record names.
ChunkWindow::View ViewOf(const ChunkPoolCheckpoint::Source& source);

// The window's pass when `replay` was drawn.
inline uint64_t WindowPassOf(const ChunkPoolCheckpoint::Replay& replay) {
  return replay.has_window_pass() ? replay.window_pass() : replay.pass();
}

class ChunkPoolMerge {
 public:
  // `old`: the old ranks' states, by old rank.
  ChunkPoolMerge(std::vector<ChunkPoolCheckpoint> old, uint32_t rank,
                 uint32_t world_size);

  // False when no old pool had started (the merged pool starts afresh).
  bool started() const;
  size_t old_ranks() const { return old_.size(); }
  // The names of the files the old states name.
  std::vector<std::string> Names() const;
  // The number chunk `number` of old rank `old_rank` has in the merged
  // state (a number no chunk has when it names none).
  uint64_t Translate(uint32_t old_rank, uint64_t number) const;
  // What the stage below needs: its records to read again, and by old
  // rank the frames its reservoir had taken of that rank's first replay.
  void Request(const ElasticRequest& request);

  // One chunk to read first: chunk `local_index` of `source`, numbered
  // `number`.
  struct Read {
    std::shared_ptr<const ChunkSource> source;  // null: gone or changed
    size_t local_index = 0;
    uint64_t number = 0;
    uint64_t pass = 0;
    uint32_t skip = 0;              // replays: frames to leave out
    std::vector<uint32_t> records;  // restores: the records wanted
  };
  struct Result {
    // The merged window, for ChunkWindow::Restore.
    ChunkPoolCheckpoint window;
    // The source each record of `window` names, by its base.
    std::map<uint64_t, std::shared_ptr<const ChunkSource>> sources;
    std::vector<Read> restores;
    std::vector<Read> replays;
    // Old source records found gone or changed, and their chunks.
    std::vector<std::string> gone, changed;
    uint64_t gone_chunks = 0, changed_chunks = 0;
  };
  // The merge, given `files`: the files named (Names()) that exist, each
  // indexed whole (before any rank filter), by name.
  Result Resolve(const std::map<std::string, std::shared_ptr<const ChunkSource>,
                                std::less<>>& files,
                 uint64_t capacity, bool single_pass) const;

 private:
  // A source record of an old state and its number in the merged state.
  struct OldRecord {
    const ChunkPoolCheckpoint::Source* source;
    uint64_t base;  // in the merged numbering
  };
  // The record of old rank `k` that holds chunk `number`, or nullptr.
  const OldRecord* RecordOf(uint32_t k, uint64_t number) const;

  const std::vector<ChunkPoolCheckpoint> old_;
  const uint32_t rank_;
  const uint32_t world_size_;
  // By old rank, sorted by the old base.
  std::vector<std::vector<OldRecord>> records_;
  uint64_t records_end_ = 0;  // the merged numbers of the old records end
  std::map<uint64_t, std::vector<uint32_t>> restore_;  // by merged number
  std::vector<uint32_t> skip_;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_INTERNAL_CHUNK_POOL_MERGE_H_
