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
#include <memory>

#include "engine/checkpoint.h"
#include "stages/lc0/format/packed_record.h"

namespace sluice::lc0 {

struct Frame {
  // Never empty in a stream; its version() keeps the on-disk version.
  PackedRecord record;
  // The identity of the game (Chunk::id()), for shuffle-quality metrics.
  uint64_t game_id = 0;
  // Where it comes from, for checkpoints (engine/checkpoint.h): the pool's
  // number of its chunk (Chunk::number) and the record's index in it.
  uint64_t chunk_number = 0;
  uint32_t record_index = 0;
  // The frame's place among the frames its chunk yielded (0, 1, ...).
  uint32_t ordinal = 0;
  // The chunk's place in the pool's output (Chunk::position), or
  // kRestoredFrame / kEndOfRestore (see Chunk::restore_records).
  uint64_t chunk_position = 0;

  // A frame read again for a resumed sampler's state, not for the stream.
  static constexpr uint64_t kRestoredFrame = ~uint64_t{0};
  // The empty frame that follows the last restored frame.
  static constexpr uint64_t kEndOfRestore = ~uint64_t{0} - 1;
};

// Checkpoints (stages/generic/reservoir_stage.h journals and restores
// frames).
inline ItemRef CheckpointRef(const Frame& frame) {
  return {.unit = frame.chunk_number, .index = frame.record_index};
}
inline StreamCursor CheckpointCursor(const Frame& frame) {
  return {.position = frame.chunk_position, .ordinal = frame.ordinal};
}
inline RestoreRole RestoreRoleOf(const Frame& frame) {
  switch (frame.chunk_position) {
    case Frame::kRestoredFrame:
      return RestoreRole::kRestored;
    case Frame::kEndOfRestore:
      return RestoreRole::kEndOfRestore;
    default:
      return RestoreRole::kStream;
  }
}
// A copy of a restored frame that a checkpoint names twice (records are
// move-only: unpacked and packed again).
inline Frame CopyItem(const Frame& frame) {
  thread_local const std::unique_ptr<V6TrainingRecord> scratch =
      std::make_unique_for_overwrite<V6TrainingRecord>();
  frame.record.Unpack(scratch.get());
  Frame copy{.record = PackedRecord::Pack(*scratch)};
  copy.game_id = frame.game_id;
  copy.chunk_number = frame.chunk_number;
  copy.record_index = frame.record_index;
  copy.ordinal = frame.ordinal;
  copy.chunk_position = frame.chunk_position;
  return copy;
}

// What a frame waiting in the reservoir holds: itself and its packed
// record (for the sampler's resident_bytes metric).
inline uint64_t ResidentBytes(const Frame& frame) {
  return sizeof(Frame) + frame.record.heap_bytes();
}

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FRAME_H_
