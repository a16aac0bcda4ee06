#include "io/recycled_bytes.h"

#include <bit>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace sluice::io {
namespace {

// RecycledBytes buffers: 4 KiB, then four sizes per doubling (5, 6, 7 and 8
// KiB; 10, 12, 14 and 16 KiB; ...) up to 4 MiB, so that at most a fifth of
// a buffer goes unused; recycled through one free list per size, at most
// kMaxFreeBytes in all.
constexpr size_t kSmallestBuffer = size_t{1} << 12;
constexpr size_t kLargestRecycled = size_t{4} << 20;
constexpr size_t kMaxFreeBytes = size_t{32} << 20;
constexpr size_t kSizesPerDoubling = 4;
constexpr size_t kRecycledSizes =
    1 + kSizesPerDoubling * (std::countr_zero(kLargestRecycled) -
                             std::countr_zero(kSmallestBuffer));

// The capacity that holds `size` bytes (size > 0).
size_t CapacityFor(size_t size) {
  if (size > kLargestRecycled) return size;
  if (size <= kSmallestBuffer) return kSmallestBuffer;
  const size_t step = std::bit_floor(size - 1) / kSizesPerDoubling;
  return (size + step - 1) / step * step;
}

// The free list of a recycled capacity (a CapacityFor value).
size_t ListOf(size_t capacity) {
  if (capacity == kSmallestBuffer) return 0;
  const size_t base = std::bit_floor(capacity - 1);
  const size_t doubling = static_cast<size_t>(
      std::countr_zero(base) - std::countr_zero(kSmallestBuffer));
  return doubling * kSizesPerDoubling +
         (capacity - base) / (base / kSizesPerDoubling);
}

// The process-wide free lists of RecycledBytes buffers; thread-safe.
class FreeBuffers {
 public:
  // Never destroyed: chunks may outlive every pool, even main().
  static FreeBuffers& Get() {
    static FreeBuffers* const free_buffers = new FreeBuffers;
    return *free_buffers;
  }

  // A buffer of `capacity` bytes (a recycled size), contents unspecified.
  std::unique_ptr<char[]> Take(size_t capacity) {
    {
      std::lock_guard lock(mu_);
      std::vector<std::unique_ptr<char[]>>& list = lists_[ListOf(capacity)];
      if (!list.empty()) {
        std::unique_ptr<char[]> memory = std::move(list.back());
        list.pop_back();
        free_bytes_ -= capacity;
        return memory;
      }
    }
    return std::make_unique_for_overwrite<char[]>(capacity);
  }

  // Keeps `memory` for reuse unless the lists are full.
  void Give(std::unique_ptr<char[]> memory, size_t capacity) {
    {
      std::lock_guard lock(mu_);
      if (free_bytes_ + capacity <= kMaxFreeBytes) {
        lists_[ListOf(capacity)].push_back(std::move(memory));
        free_bytes_ += capacity;
        return;
      }
    }
    memory.reset();  // outside the lock
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<char[]>> lists_[kRecycledSizes];
  size_t free_bytes_ = 0;
};

}  // namespace

RecycledBytes::RecycledBytes(std::string_view bytes)
    : RecycledBytes(ForOverwrite(bytes.size())) {
  if (!bytes.empty()) std::memcpy(data(), bytes.data(), bytes.size());
}

RecycledBytes& RecycledBytes::operator=(const RecycledBytes& other) {
  if (this != &other) *this = RecycledBytes(std::string_view(other));
  return *this;
}

RecycledBytes::RecycledBytes(RecycledBytes&& other) noexcept
    : memory_(std::move(other.memory_)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

RecycledBytes& RecycledBytes::operator=(RecycledBytes&& other) noexcept {
  if (this != &other) {
    Release();
    memory_ = std::move(other.memory_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

RecycledBytes::~RecycledBytes() { Release(); }

RecycledBytes RecycledBytes::ForOverwrite(size_t size) {
  RecycledBytes bytes;
  if (size == 0) return bytes;
  bytes.capacity_ = CapacityFor(size);
  bytes.memory_ = bytes.capacity_ <= kLargestRecycled
                      ? FreeBuffers::Get().Take(bytes.capacity_)
                      : std::make_unique_for_overwrite<char[]>(size);
  bytes.size_ = size;
  return bytes;
}

void RecycledBytes::resize(size_t size) {
  if (size <= capacity_) {
    size_ = size;
    return;
  }
  RecycledBytes larger = ForOverwrite(size);
  if (size_ > 0) std::memcpy(larger.data(), data(), size_);
  *this = std::move(larger);
}

void RecycledBytes::Release() {
  if (memory_ != nullptr && capacity_ <= kLargestRecycled) {
    FreeBuffers::Get().Give(std::move(memory_), capacity_);
  }
  memory_.reset();
  size_ = 0;
  capacity_ = 0;
}

}  // namespace sluice::io
