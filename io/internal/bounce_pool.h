// BouncePool: recycled page-aligned buffers for O_DIRECT reads whose own
// destination is not aligned (io::AsyncFileReader reads the aligned span
// around them into one and copies out). Recycling spares each such read a
// fresh allocation, whose pages the kernel would fault in and zero again.
//
// Promises: Take(size) returns a buffer of at least `size` bytes (sizes go
// up in powers of two from 64 KiB); Give() keeps it for a later Take unless
// the pool already holds kMaxKeptBytes. Thread-safe.
#ifndef SLUICE_IO_INTERNAL_BOUNCE_POOL_H_
#define SLUICE_IO_INTERNAL_BOUNCE_POOL_H_

#include <bit>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include "io/aligned_buffer.h"

namespace sluice::io::internal {

class BouncePool {
 public:
  static constexpr size_t kMaxKeptBytes = size_t{32} << 20;

  AlignedBuffer Take(size_t size) {
    const size_t rounded = std::bit_ceil(std::max<size_t>(size, 64 << 10));
    {
      std::lock_guard lock(mu_);
      for (size_t i = 0; i < kept_.size(); ++i) {
        if (kept_[i].size() != rounded) continue;
        AlignedBuffer buffer = std::move(kept_[i]);
        kept_[i] = std::move(kept_.back());
        kept_.pop_back();
        kept_bytes_ -= rounded;
        return buffer;
      }
    }
    return AlignedBuffer(rounded);
  }

  void Give(AlignedBuffer buffer) {
    if (buffer.data() == nullptr) return;
    std::lock_guard lock(mu_);
    if (kept_bytes_ + buffer.size() > kMaxKeptBytes) return;
    kept_bytes_ += buffer.size();
    kept_.push_back(std::move(buffer));
  }

 private:
  std::mutex mu_;
  std::vector<AlignedBuffer> kept_;
  size_t kept_bytes_ = 0;
};

}  // namespace sluice::io::internal

#endif  // SLUICE_IO_INTERNAL_BOUNCE_POOL_H_
