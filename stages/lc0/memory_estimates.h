// The lc0 stages' estimates of what their items hold, for the memory model
// (engine/memory_model.h, docs/tuning.md). The model is built from the
// config before any data is read, so sizes that depend on the games are
// estimates: those of a training game of about 150 positions.
#ifndef SLUICE_STAGES_LC0_MEMORY_ESTIMATES_H_
#define SLUICE_STAGES_LC0_MEMORY_ESTIMATES_H_

#include <cstdint>

#include "stages/lc0/frame.h"

namespace sluice::lc0 {

// A chunk as read (gzip-compressed V6 records).
inline constexpr uint64_t kCompressedChunkBytesEstimate = uint64_t{256} << 10;
// A chunk decompressed (150 records of 8356 bytes).
inline constexpr uint64_t kDecompressedChunkBytesEstimate = 150 * 8356;
// A frame: the struct and its packed record on the heap (about 1.1 KB,
// stages/lc0/format/packed_record.h), with what the allocator keeps around
// records that a reservoir frees in random order: measured at 1.7-2.3 KB
// of resident memory per reservoir frame (bench/memory_budget_benchmark).
inline constexpr uint64_t kFrameBytesEstimate = sizeof(Frame) + 1900;
// A chunk's entry in the pool's window (its place in its source).
inline constexpr uint64_t kWindowEntryBytesEstimate = 64;

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_MEMORY_ESTIMATES_H_
