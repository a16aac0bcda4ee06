// ReadOnlyFile: an open file descriptor, the file's size and path, closed
// at destruction; exact reads through io::AsyncFileReader. Movable.
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
#include "io/async_file_reader.h"

namespace sluice::io::arrow::internal {

class ReadOnlyFile {
 public:
  // Opens `path` for reading; the error carries errno's text and the path.
  static absl::StatusOr<ReadOnlyFile> Open(std::string path);

  ReadOnlyFile(ReadOnlyFile&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        size_(other.size_),
        path_(std::move(other.path_)) {}
  ReadOnlyFile& operator=(ReadOnlyFile&&) = delete;
  ~ReadOnlyFile();

  int fd() const { return fd_; }
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }

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
  ReadOnlyFile(int fd, int64_t size, std::string path)
      : fd_(fd), size_(size), path_(std::move(path)) {}

  int fd_ = -1;
  int64_t size_ = 0;
  std::string path_;
};

}  // namespace sluice::io::arrow::internal

#endif  // SLUICE_IO_ARROW_INTERNAL_READ_ONLY_FILE_H_
