// RecycledBytes: a byte buffer for file contents, recycled process-wide.
#ifndef SLUICE_IO_RECYCLED_BYTES_H_
#define SLUICE_IO_RECYCLED_BYTES_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace sluice::io {

// Bytes read from a file (a chunk, a record batch). Reads like a std::string
// of them (data, size, [], substr, ==, converts to std::string_view), but its
// memory is never zero-filled and is recycled: ForOverwrite() takes a buffer
// from a process-wide free list (buffer sizes go up in steps of a quarter of
// a power of two, to 4 MiB, so that a decompressed lc0 game fits), and
// destruction, on any thread, gives it back (the list keeps at most 32 MiB;
// larger buffers go straight back to the heap). A copy takes a buffer of its
// own.
//
//   RecycledBytes bytes = RecycledBytes::ForOverwrite(size);  // contents unset
//   co_await reader.ReadFullyAt(fd, offset, std::as_writable_bytes(
//       std::span(bytes.data(), bytes.size())));
class RecycledBytes {
 public:
  RecycledBytes() = default;
  // Copies `bytes`; implicit, so that a string assigns where bytes are kept.
  RecycledBytes(std::string_view bytes);
  RecycledBytes(const std::string& bytes)
      : RecycledBytes(std::string_view(bytes)) {}
  RecycledBytes(const RecycledBytes& other)
      : RecycledBytes(std::string_view(other)) {}
  RecycledBytes& operator=(const RecycledBytes& other);
  RecycledBytes(RecycledBytes&& other) noexcept;
  RecycledBytes& operator=(RecycledBytes&& other) noexcept;
  ~RecycledBytes();

  // `size` bytes whose contents are unspecified until written.
  static RecycledBytes ForOverwrite(size_t size);

  char* data() { return memory_.get(); }
  const char* data() const { return memory_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  char& operator[](size_t i) { return memory_[i]; }
  char operator[](size_t i) const { return memory_[i]; }
  // Implicit, so that the bytes pass where a std::string_view is taken.
  operator std::string_view() const { return std::string_view(data(), size_); }
  std::string_view substr(size_t pos,
                          size_t count = std::string_view::npos) const {
    return std::string_view(*this).substr(pos, count);
  }
  // Keeps the first min(size, size()) bytes; bytes past them are
  // unspecified until written.
  void resize(size_t size);

  friend bool operator==(const RecycledBytes& a, std::string_view b) {
    return std::string_view(a) == b;
  }

 private:
  // Gives the memory back (to the free list when it came from it).
  void Release();

  std::unique_ptr<char[]> memory_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace sluice::io

#endif  // SLUICE_IO_RECYCLED_BYTES_H_
