#include "engine/batch_buffer_pool.h"

#include <cstdlib>

namespace sluice {

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
  // aligned_alloc takes whole multiples of the alignment.
  const size_t rounded = (bytes_ + kBatchBufferAlignment - 1) /
                         kBatchBufferAlignment * kBatchBufferAlignment;
  void* buffer = std::aligned_alloc(kBatchBufferAlignment, rounded);
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

}  // namespace sluice
