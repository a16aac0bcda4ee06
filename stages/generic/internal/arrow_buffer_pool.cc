#include "stages/generic/internal/arrow_buffer_pool.h"

#include <sched.h>

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
  for (std::vector<std::vector<std::byte>>& buffers : free_) {
    for (std::vector<std::byte>& buffer : buffers) {
      if (buffer.capacity() > 0) IdleBuffers::Get().Give(std::move(buffer));
    }
  }
}

std::vector<std::byte> ArrowBufferPool::Take(unsigned home) {
  {
    std::lock_guard lock(mu_);
    for (unsigned i = 0; i < kHomes && kept_ > 0; ++i) {
      std::vector<std::vector<std::byte>>& buffers = free_[(home + i) % kHomes];
      if (buffers.empty()) continue;
      std::vector<std::byte> buffer = std::move(buffers.back());
      buffers.pop_back();
      --kept_;
      return buffer;
    }
  }
  return IdleBuffers::Get().Take();
}

void ArrowBufferPool::Give(std::vector<std::byte> buffer, unsigned home) {
  // A buffer not kept is freed on return, after the lock is released.
  std::lock_guard lock(mu_);
  if (kept_ >= keep_) return;
  free_[home % kHomes].push_back(std::move(buffer));
  ++kept_;
}

unsigned ArrowBufferPool::CurrentHome() {
  const int cpu = sched_getcpu();
  return cpu < 0 ? 0 : static_cast<unsigned>(cpu);
}

size_t ArrowBufferPool::IdleBytes() { return IdleBuffers::Get().bytes(); }

}  // namespace sluice
