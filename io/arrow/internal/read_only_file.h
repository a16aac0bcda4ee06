// ReadOnlyFile: an open file descriptor, the file's version (size and
// identity when opened) and path, closed at destruction; exact reads through
// io::AsyncFileReader. Movable.
#ifndef SLUICE_IO_ARROW_INTERNAL_READ_ONLY_FILE_H_
#define SLUICE_IO_ARROW_INTERNAL_READ_ONLY_FILE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asio/awaitable.hpp"
#include "io/arrow/file_version.h"
#include "io/async_file_reader.h"

namespace sluice::io::arrow::internal {

// Makes `buffer` at least `size` bytes long, never shorter: a recycled
// buffer keeps its length, so a later, larger read does not pay for
// zero-filling its tail again (std::vector::resize value-initializes). Its
// contents are unspecified afterwards (callers read into it): a buffer too
// small is replaced, not copied, by one with half again as much room, so
// that a recycled buffer meeting reads of varying sizes (record
// batches) grows once, not at every larger one.
void GrowWithoutShrinking(std::vector<std::byte>& buffer, size_t size);

// Grows `buffer` (never shrinks it: a recycled buffer is not zero-filled
// again) to hold `size` bytes read from file offset `offset` at
// the address congruent to the offset modulo the 4 KiB page (up to 4095
// bytes more), and returns where they go. The kernel's copy from the page
// cache (rep movsb on x86) runs 3-5x slower when the destination sits 1 to
// 31 bytes past the source within a page, where a malloc'd buffer puts a
// read at a page-aligned offset (docs/performance.md). Keeps 8-byte
// alignment for 8-byte aligned offsets.
std::span<std::byte> PageCongruentSpan(std::vector<std::byte>& buffer,
                                       int64_t offset, size_t size);

class ReadOnlyFile {
 public:
  // Opens `path` for reading, with `direct_io` bypassing the page cache
  // (O_DIRECT) where the file system allows it (io/direct_file.h); the
  // error carries errno's text and the path.
  static absl::StatusOr<ReadOnlyFile> Open(std::string path,
                                           bool direct_io = false);

  ReadOnlyFile(ReadOnlyFile&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        direct_alignment_(other.direct_alignment_),
        version_(other.version_),
        path_(std::move(other.path_)),
        direct_io_refusal_(std::move(other.direct_io_refusal_)) {}
  ReadOnlyFile& operator=(ReadOnlyFile&&) = delete;
  ~ReadOnlyFile();

  int fd() const { return fd_; }
  int64_t size() const { return version_.size; }
  // The file as it was when opened.
  const FileVersion& version() const { return version_; }
  const std::string& path() const { return path_; }
  // Why direct_io was asked for and the file is read buffered; else empty.
  const std::string& direct_io_refusal() const { return direct_io_refusal_; }
  // A read of the file at `offset` into `buffer` (aligned for O_DIRECT by
  // the reader where needed).
  AsyncFileReader::ReadRequest Request(int64_t offset,
                                       std::span<std::byte> buffer) const {
    return {.fd = fd_,
            .offset = static_cast<uint64_t>(offset),
            .buffer = buffer,
            .direct_alignment = direct_alignment_};
  }

  // Reads exactly `buffer.size()` bytes at `offset`: an I/O error names the
  // path, a short read is DataLoss ("file truncated").
  asio::awaitable<absl::Status> ReadExactly(AsyncFileReader& reader,
                                            int64_t offset,
                                            std::span<std::byte> buffer) const;

  // Reads exactly each region's `buffer.size()` bytes at its `offset`, all
  // regions in flight together (one resumption when every read is done),
  // with ReadExactly's errors for the first region that fails.
  struct Region {
    int64_t offset = 0;
    std::span<std::byte> buffer;
  };
  asio::awaitable<absl::Status> ReadEachExactly(
      AsyncFileReader& reader, std::span<const Region> regions) const;

 private:
  ReadOnlyFile(int fd, uint32_t direct_alignment, const FileVersion& version,
               std::string path, std::string direct_io_refusal)
      : fd_(fd),
        direct_alignment_(direct_alignment),
        version_(version),
        path_(std::move(path)),
        direct_io_refusal_(std::move(direct_io_refusal)) {}

  int fd_ = -1;
  uint32_t direct_alignment_ = 0;
  FileVersion version_;
  std::string path_;
  std::string direct_io_refusal_;
};

}  // namespace sluice::io::arrow::internal

#endif  // SLUICE_IO_ARROW_INTERNAL_READ_ONLY_FILE_H_
