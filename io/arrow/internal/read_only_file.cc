#include "io/arrow/internal/read_only_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "io/direct_file.h"

namespace sluice::io::arrow::internal {

void GrowWithoutShrinking(std::vector<std::byte>& buffer, size_t size) {
  if (buffer.size() >= size) return;
  if (buffer.capacity() < size) {
    buffer = std::vector<std::byte>();  // freed first: its memory may serve
    buffer.reserve(size + size / 2);
  }
  buffer.resize(size);
}

std::span<std::byte> PageCongruentSpan(std::vector<std::byte>& buffer,
                                       int64_t offset, size_t size) {
  constexpr size_t kPageBytes = 4096;
  GrowWithoutShrinking(buffer, size + kPageBytes - 1);
  const size_t lead = (static_cast<uintptr_t>(offset) -
                       reinterpret_cast<uintptr_t>(buffer.data())) %
                      kPageBytes;
  return std::span(buffer).subspan(lead, size);
}

absl::StatusOr<ReadOnlyFile> ReadOnlyFile::Open(std::string path,
                                                bool direct_io) {
  absl::StatusOr<ReadableFile> file = OpenForReading(path, direct_io);
  if (!file.ok()) return file.status();
  struct stat info;
  if (fstat(file->fd, &info) != 0) {
    absl::Status status = absl::ErrnoToStatus(errno, "stat " + path);
    close(file->fd);
    return status;
  }
  return ReadOnlyFile(file->fd, file->direct_alignment, FileVersion::Of(info),
                      std::move(path), std::move(file->refusal));
}

ReadOnlyFile::~ReadOnlyFile() {
  if (fd_ >= 0) close(fd_);
}

asio::awaitable<absl::Status> ReadOnlyFile::ReadExactly(
    AsyncFileReader& reader, int64_t offset,
    std::span<std::byte> buffer) const {
  absl::StatusOr<size_t> got =
      co_await reader.ReadFullyAt(Request(offset, buffer));
  if (!got.ok()) {
    co_return absl::Status(got.status().code(),
                           absl::StrCat(path_, ": ", got.status().message()));
  }
  if (*got != buffer.size()) {
    co_return absl::DataLossError(
        absl::StrCat(path_, ": file truncated: ", *got, " of ", buffer.size(),
                     " bytes at offset ", offset));
  }
  co_return absl::OkStatus();
}

asio::awaitable<absl::Status> ReadOnlyFile::ReadEachExactly(
    AsyncFileReader& reader, std::span<const Region> regions) const {
  std::vector<AsyncFileReader::ReadRequest> requests;
  requests.reserve(regions.size());
  for (const Region& region : regions) {
    requests.push_back(Request(region.offset, region.buffer));
  }
  const std::vector<absl::StatusOr<size_t>> got =
      co_await reader.ReadBatchAt(requests);
  for (size_t i = 0; i < regions.size(); ++i) {
    if (got[i].ok() && *got[i] == regions[i].buffer.size()) continue;
    // A failed or short read: once more on its own, which reads on after a
    // short read and words the error.
    absl::Status status =
        co_await ReadExactly(reader, regions[i].offset, regions[i].buffer);
    if (!status.ok()) co_return status;
  }
  co_return absl::OkStatus();
}

}  // namespace sluice::io::arrow::internal
