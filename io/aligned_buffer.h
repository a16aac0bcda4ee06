// AlignedBuffer: heap bytes whose first byte sits at a multiple of an
// alignment (a page by default): what O_DIRECT reads need, and what makes
// a copy out of the page cache start page against page.
//
//   AlignedBuffer buffer(1 << 20);        // 1 MiB at a page boundary
//   co_await reader.ReadAt(fd, 0, buffer.span());
//
// Contents are unset until written; moves keep the address; destruction
// frees.
#ifndef SLUICE_IO_ALIGNED_BUFFER_H_
#define SLUICE_IO_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>

namespace sluice::io {

class AlignedBuffer {
 public:
  static constexpr size_t kPageBytes = 4096;

  AlignedBuffer() = default;
  // `size` bytes at a multiple of `alignment` (a power of two); the
  // allocation is rounded up to whole alignments. Throws std::bad_alloc.
  explicit AlignedBuffer(size_t size, size_t alignment = kPageBytes)
      : size_(size) {
    if (size == 0) return;
    const size_t rounded = (size + alignment - 1) / alignment * alignment;
    void* memory = std::aligned_alloc(alignment, rounded);
    if (memory == nullptr) throw std::bad_alloc();
    memory_.reset(static_cast<std::byte*>(memory));
  }

  std::byte* data() const { return memory_.get(); }
  size_t size() const { return size_; }
  std::span<std::byte> span() const { return {memory_.get(), size_}; }

 private:
  struct Free {
    void operator()(std::byte* memory) const { std::free(memory); }
  };
  std::unique_ptr<std::byte, Free> memory_;
  size_t size_ = 0;
};

}  // namespace sluice::io

#endif  // SLUICE_IO_ALIGNED_BUFFER_H_
