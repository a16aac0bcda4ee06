// Record blocks: the heap blocks PackedRecords live in, recycled by size.
//
// A packed record (~1.1 KB) is allocated by an unpacker on one worker
// thread and freed by a tensor generator on another, hundreds of thousands
// of times a second. Through malloc, every such free lands in the
// allocating thread's arena (the block is above glibc's 1,032-byte
// per-thread cache), so the workers contend on arena locks and coalesce and
// split the same chunks over and over. Here a freed block goes to a
// per-thread cache of its size class, and caches trade blocks with one
// shared list in batches, so the lock is taken once per batch.
//
//   std::byte* block = record_blocks::Allocate(bytes);
//   ...
//   record_blocks::Free(block, bytes);  // the same `bytes`
//
// Promises: Allocate returns at least `bytes` bytes (16-byte aligned), or
// throws std::bad_alloc. Blocks above kMaxPooledBytes are plain heap
// allocations. Unused blocks kept for reuse are bounded: at most
// kMaxCachedPerClass per class per thread and kMaxSharedBytes in the shared
// list; beyond that they are freed. Thread-safe.
#ifndef SLUICE_STAGES_LC0_FORMAT_RECORD_BLOCKS_H_
#define SLUICE_STAGES_LC0_FORMAT_RECORD_BLOCKS_H_

#include <cstddef>

namespace sluice::lc0::record_blocks {

// Sizes are rounded up to a multiple of this.
inline constexpr size_t kClassBytes = 64;
// Larger blocks are not recycled.
inline constexpr size_t kMaxPooledBytes = 2048;
// Blocks moved between a thread's cache and the shared list at once.
inline constexpr size_t kBatchBlocks = 64;
inline constexpr size_t kMaxCachedPerClass = 2 * kBatchBlocks;
inline constexpr size_t kMaxSharedBytes = size_t{16} << 20;

// A block of at least `bytes` bytes.
std::byte* Allocate(size_t bytes);
// Gives back a block from Allocate(bytes), with the same `bytes`.
void Free(std::byte* block, size_t bytes);

// Unused blocks in the shared list now (for tests).
size_t SharedFreeBlocks();

}  // namespace sluice::lc0::record_blocks

#endif  // SLUICE_STAGES_LC0_FORMAT_RECORD_BLOCKS_H_
