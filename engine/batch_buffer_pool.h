// BatchBufferPool: recycles the 64-byte-aligned allocations of batches of one
// size, for any workload. A batch is typically tens of MB (lc0: ~37 MB for
// 1024 positions), above glibc's mmap threshold: without recycling every
// batch costs an mmap, thousands of page faults and an munmap. Batch types
// built on a pool hand their buffer back when the last owner drops it (also
// after the owner went to Python).
//
//   auto pool = BatchBufferPool::Create(bytes_per_batch, 4);
//   void* buffer = pool->Acquire();   // contents unspecified
//   ...
//   pool->Release(buffer);            // from any thread
//
// Thread-safe. The pool lives as long as any buffer it handed out.
#ifndef SLUICE_ENGINE_BATCH_BUFFER_POOL_H_
#define SLUICE_ENGINE_BATCH_BUFFER_POOL_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace sluice {

// Every buffer starts at a multiple of this (a cache line; AVX-512 loads).
inline constexpr size_t kBatchBufferAlignment = 64;

class BatchBufferPool {
 public:
  // A pool of `bytes`-sized, 64-byte-aligned buffers keeping at most
  // `max_free` unused ones (the rest are freed).
  static std::shared_ptr<BatchBufferPool> Create(size_t bytes, size_t max_free);
  ~BatchBufferPool();
  BatchBufferPool(const BatchBufferPool&) = delete;
  BatchBufferPool& operator=(const BatchBufferPool&) = delete;

  size_t bytes() const { return bytes_; }
  // A recycled buffer, or a fresh one; nullptr when allocation fails. Its
  // contents are unspecified.
  void* Acquire();
  // Takes a buffer of this pool back.
  void Release(void* buffer);
  // Unused buffers held now.
  size_t free_buffers() const;
  // Buffers allocated now: handed out or held unused.
  size_t allocated_buffers() const;

 private:
  BatchBufferPool(size_t bytes, size_t max_free)
      : bytes_(bytes), max_free_(max_free) {}

  const size_t bytes_;
  const size_t max_free_;
  mutable std::mutex mu_;
  std::vector<void*> free_;  // guarded by mu_
  size_t allocated_ = 0;     // guarded by mu_
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_BATCH_BUFFER_POOL_H_
