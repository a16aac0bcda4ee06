#include "stages/generic/internal/arrow_buffer_pool.h"

#include <utility>

namespace sluice {
namespace {

// The process-wide cache of idle buffers; thread-safe.
class IdleBuffers {
 public:
  // Never destroyed: pools may be destroyed during static destruction.
  static IdleBuffers& Get() {
    static IdleBuffers* const idle = new IdleBuffers;
    return *idle;
  }

  // The most recently given idle buffer, or an empty one.
  std::vector<std::byte> Take() {
    std::lock_guard lock(mu_);
    if (buffers_.empty()) return {};
    std::vector<std::byte> buffer = std::move(buffers_.back());
    buffers_.pop_back();
    bytes_ -= buffer.capacity();
    return buffer;
  }

  // Keeps `buffer` if it fits under kIdleBufferBytes; frees it otherwise
  // (on return, outside the lock).
  void Give(std::vector<std::byte> buffer) {
    std::lock_guard lock(mu_);
    if (bytes_ + buffer.capacity() <= kIdleBufferBytes) {
      bytes_ += buffer.capacity();
      buffers_.push_back(std::move(buffer));
    }
  }

  size_t bytes() {
    std::lock_guard lock(mu_);
    return bytes_;
  }

 private:
  std::mutex mu_;
  std::vector<std::vector<std::byte>> buffers_;
  size_t bytes_ = 0;
};

}  // namespace

ArrowBufferPool::~ArrowBufferPool() {
  for (std::vector<std::byte>& buffer : free_) {
    if (buffer.capacity() > 0) IdleBuffers::Get().Give(std::move(buffer));
  }
}

std::vector<std::byte> ArrowBufferPool::Take() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      std::vector<std::byte> buffer = std::move(free_.back());
      free_.pop_back();
      return buffer;
    }
  }
  return IdleBuffers::Get().Take();
}

void ArrowBufferPool::Give(std::vector<std::byte> buffer) {
  // A buffer not kept is freed on return, after the lock is released.
  std::lock_guard lock(mu_);
  if (free_.size() < keep_) free_.push_back(std::move(buffer));
}

size_t ArrowBufferPool::IdleBytes() { return IdleBuffers::Get().bytes(); }

}  // namespace sluice
