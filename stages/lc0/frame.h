// Frame: one training position on its way from the ChunkUnpacker through
// the ShufflingFrameSampler to the TensorGenerator: a record in the V6
// layout (up-converted, validated) and the game it came from.
//
//   Frame frame = MakeFrame(chunk.id());
//   UpconvertToV6(bytes, version, frame.record.get());
//   co_await output->Send(std::move(frame));
//
// Cost of a move: the record lives on the heap, so moving a Frame copies
// 16 bytes. Kept inline, the 8356-byte record would be copied several times
// per channel hop (into the coroutine frame of Send, into the channel's
// buffer, out of it into an optional, into Receive's result) and twice per
// reservoir swap: ~10 copies, ~80 KB of memory traffic per position, against
// one allocation and one free of a size the allocator recycles. The
// reservoir holds the same bytes either way.
#ifndef SLUICE_STAGES_LC0_FRAME_H_
#define SLUICE_STAGES_LC0_FRAME_H_

#include <cstdint>
#include <memory>

#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {

struct Frame {
  // Never null in a stream; its `version` keeps the on-disk version.
  std::unique_ptr<V6TrainingRecord> record;
  // The identity of the game (Chunk::id()), for shuffle-quality metrics.
  uint64_t game_id = 0;
};

// A frame of game `game_id` with an uninitialized record to fill.
inline Frame MakeFrame(uint64_t game_id) {
  return Frame{std::make_unique_for_overwrite<V6TrainingRecord>(), game_id};
}

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FRAME_H_
