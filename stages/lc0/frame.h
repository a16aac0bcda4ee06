// Frame: one training position on its way from the ChunkUnpacker through
// the ShufflingFrameSampler to the TensorGenerator: a record in the V6
// layout (up-converted, validated) and the game it came from.
//
//   const V6TrainingRecord& record = ViewAsV6(bytes, version, &scratch);
//   Frame frame{PackedRecord::Pack(record), chunk.id()};
//   co_await output->Send(std::move(frame));
//
// The record is packed (stages/lc0/format/packed_record.h): about 1.2 KB on
// the heap instead of 8,356 bytes, so a reservoir holds seven times as many
// positions in the same memory, and moving a Frame copies 24 bytes.
#ifndef SLUICE_STAGES_LC0_FRAME_H_
#define SLUICE_STAGES_LC0_FRAME_H_

#include <cstdint>

#include "stages/lc0/format/packed_record.h"

namespace sluice::lc0 {

struct Frame {
  // Never empty in a stream; its version() keeps the on-disk version.
  PackedRecord record;
  // The identity of the game (Chunk::id()), for shuffle-quality metrics.
  uint64_t game_id = 0;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FRAME_H_
