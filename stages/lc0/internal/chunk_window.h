// ChunkWindow: the bookkeeping of ShufflingChunkPool, without I/O or
// threads: indexed sources numbered chronologically, the window of the
// newest `capacity` chunks, a stream shuffler over that dynamic range, and
// the anchor.
//
//   ChunkWindow window(/*capacity=*/1000, /*single_pass=*/false, seed);
//   window.Add(indexed_source);           // newest; evicts what falls out
//   std::optional<ChunkWindow::Draw> next = window.Next();
//
// Chunks are numbered globally in the order their sources were added:
// source s holds [base_s, base_s + size_s). The window is [low, end) with
// end the next number and low = end - capacity (never below 0); sources
// wholly below low are dropped. Next() draws uniformly among the numbers of
// the current pass not drawn yet (numbers that fell below low are skipped),
// so every chunk of the window comes out exactly once per pass, and chunks
// added mid-pass join it. When a pass runs out, a new one starts over the
// current window (single-pass mode: never). Deterministic given the seed
// and the sequence of calls. Not thread-safe.
#ifndef SLUICE_STAGES_LC0_INTERNAL_CHUNK_WINDOW_H_
#define SLUICE_STAGES_LC0_INTERNAL_CHUNK_WINDOW_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/stable_hash.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/lc0/chunk.h"

namespace sluice::lc0 {

class ChunkWindow {
 public:
  // One drawn chunk: chunk `local_index` (< source->size()) of `source`.
  // `source` is null for a chunk of a source that a checkpoint named but
  // that is gone or changed (see Restore).
  struct Draw {
    std::shared_ptr<const ChunkSource> source;
    size_t local_index = 0;
    uint64_t pass = 0;
    uint64_t number = 0;  // the chunk's global number
  };
  // Which chunks of its file a source holds: those rank `rank` of
  // `world_size` reads (engine/rank_shard.h ChunkRank; 1: all).
  struct View {
    uint32_t rank = 0;
    uint32_t world_size = 1;
  };
  // A source ever added: its chunks are [base, base + size).
  struct SourceRecord {
    std::string name;
    uint64_t base = 0;
    uint64_t size = 0;
    uint64_t file_size = 0;
    View view;
  };

  // `capacity` is ignored in single-pass mode (nothing is evicted).
  ChunkWindow(uint64_t capacity, bool single_pass, uint64_t seed);

  // Adds an indexed source, the chunks of its file that `view` holds, as
  // the newest (sources without chunks are ignored), then drops the oldest
  // sources wholly outside the window.
  void Add(std::shared_ptr<const ChunkSource> source, View view);
  // The same, for a source of all its file's chunks.
  void Add(std::shared_ptr<const ChunkSource> source);

  // The next chunk; nullopt when the window is empty, or in single-pass
  // mode once every chunk added so far has been drawn.
  std::optional<Draw> Next();

  // Anchors: the anchor is a source name (the sort key); chunks since the
  // anchor are those of sources added with a greater name.
  // Sets the anchor to the greatest source name in the window and the count
  // to zero.
  void ResetAnchor();
  // Sets the anchor to `key`; the count restarts from the chunks in the
  // window whose sources sort after `key`.
  void SetAnchor(std::string key);
  const std::string& anchor() const { return anchor_; }
  uint64_t chunks_since_anchor() const { return chunks_since_anchor_; }

  // Checkpoints: writes the window's state and the record of every source
  // in it into `out` (ChunkPoolCheckpoint's window fields).
  void Save(ChunkPoolCheckpoint* out) const;
  // Replaces this (new) window's state by a saved one. `find(source)`
  // gives the indexed source a saved one names (its file's chunks of its
  // view), or null when it is gone or changed: draws from it then have a
  // null source. `in.source` must hold every source of the saved window.
  void Restore(const ChunkPoolCheckpoint& in,
               const std::function<std::shared_ptr<const ChunkSource>(
                   const ChunkPoolCheckpoint::Source&)>& find);
  // The source ever added that holds chunk `number`, or nullptr.
  const SourceRecord* RecordOf(uint64_t number) const;

  size_t sources() const { return sources_.size(); }
  uint64_t chunks() const { return end_ - low_; }
  // Passes completed (a new pass started over the window).
  uint64_t passes() const { return pass_; }
  // Chunks that left the window, since construction.
  uint64_t chunks_dropped() const { return dropped_; }

 private:
  struct Entry {
    std::shared_ptr<const ChunkSource> source;  // null: gone or changed
    std::string name;
    uint64_t base = 0;
    uint64_t size = 0;
  };

  // Removes pending numbers below low_ when they make up most of it.
  void MaybeCompact();

  const uint64_t capacity_;
  const bool single_pass_;
  StableRandom random_;
  std::deque<Entry> sources_;  // by base, oldest first
  uint64_t low_ = 0;
  uint64_t end_ = 0;
  uint64_t pass_ = 0;
  uint64_t dropped_ = 0;
  std::vector<uint64_t> pending_;      // numbers of this pass not drawn yet
  std::vector<SourceRecord> history_;  // every source added, by base
  std::string anchor_;
  uint64_t chunks_since_anchor_ = 0;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_INTERNAL_CHUNK_WINDOW_H_
