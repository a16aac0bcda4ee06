// BatchBufferPool: recycles the aligned allocations of TensorBatches of one
// size. A batch of 1024 positions is ~37 MB, above glibc's mmap threshold:
// without recycling every batch costs an mmap, ~9,000 page faults and an
// munmap. Batches made from a pool give their buffer back when the last
// owner drops it (also after ReleaseOwnership(), e.g. from Python).
//
//   auto pool = BatchBufferPool::Create(TensorBatch::AllocationBytes(1024), 4);
//   SLUICE_ASSIGN_OR_RETURN(TensorBatch batch, TensorBatch::Create(1024,
//   pool));
//
// Thread-safe. The pool lives as long as any buffer it handed out.
#ifndef SLUICE_STAGES_LC0_FORMAT_BATCH_BUFFER_POOL_H_
#define SLUICE_STAGES_LC0_FORMAT_BATCH_BUFFER_POOL_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace sluice::lc0 {

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

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_BATCH_BUFFER_POOL_H_
