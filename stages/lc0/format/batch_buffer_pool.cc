#include "stages/lc0/format/batch_buffer_pool.h"

#include <cstdlib>

#include "stages/lc0/format/tensor_batch.h"

namespace sluice::lc0 {

std::shared_ptr<BatchBufferPool> BatchBufferPool::Create(size_t bytes,
                                                         size_t max_free) {
  return std::shared_ptr<BatchBufferPool>(new BatchBufferPool(bytes, max_free));
}

BatchBufferPool::~BatchBufferPool() {
  for (void* buffer : free_) std::free(buffer);
}

void* BatchBufferPool::Acquire() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      void* buffer = free_.back();
      free_.pop_back();
      return buffer;
    }
    ++allocated_;
  }
  void* buffer = std::aligned_alloc(kTensorAlignment, bytes_);
  if (buffer == nullptr) {
    std::lock_guard lock(mu_);
    --allocated_;
  }
  return buffer;
}

void BatchBufferPool::Release(void* buffer) {
  {
    std::lock_guard lock(mu_);
    if (free_.size() < max_free_) {
      free_.push_back(buffer);
      return;
    }
    --allocated_;
  }
  std::free(buffer);
}

size_t BatchBufferPool::free_buffers() const {
  std::lock_guard lock(mu_);
  return free_.size();
}

size_t BatchBufferPool::allocated_buffers() const {
  std::lock_guard lock(mu_);
  return allocated_;
}

}  // namespace sluice::lc0
