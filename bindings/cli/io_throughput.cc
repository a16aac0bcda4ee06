#include "bindings/cli/io_throughput.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asio/co_spawn.hpp"
#include "asio/io_context.hpp"
#include "bindings/cli/reader_job.h"
#include "io/aligned_buffer.h"
#include "io/async_file_reader.h"
#include "io/direct_file.h"

namespace sluice::cli {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status OpenError(const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
}

// A file descriptor closed on destruction.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct Block {
  int fd;
  uint64_t offset;
  uint64_t length;  // up to the block size; less at the end of a file
};

// A whole file mapped read-only, unmapped on destruction.
class Mapping {
 public:
  // Maps the file open as `fd` (an empty file maps to nothing).
  static absl::StatusOr<std::unique_ptr<Mapping>> Of(int fd) {
    struct stat info;
    if (fstat(fd, &info) != 0) {
      return absl::UnavailableError(std::strerror(errno));
    }
    if (info.st_size == 0) return std::make_unique<Mapping>(nullptr, 0);
    void* map = mmap(nullptr, info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) return absl::UnavailableError("mmap failed");
    return std::make_unique<Mapping>(static_cast<const char*>(map),
                                     info.st_size);
  }
  Mapping(const char* data, size_t size) : data_(data), size_(size) {}
  ~Mapping() {
    if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const char* data() const { return data_; }

 private:
  const char* data_;
  size_t size_;
};

}  // namespace

const char* ReadMethodName(ReadMethod method) {
  switch (method) {
    case ReadMethod::kIoUring:
      return "io_uring";
    case ReadMethod::kPread:
      return "pread";
    case ReadMethod::kMmap:
      return "mmap";
  }
  return "?";
}

std::string BlockName(uint64_t block_bytes) {
  if (block_bytes == 0) return "whole";
  if (block_bytes >= (1 << 20)) return absl::StrCat(block_bytes >> 20, "MiB");
  return absl::StrCat(block_bytes >> 10, "KiB");
}

absl::StatusOr<FileSet> CollectFiles(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  FileSet files;
  for (const std::string& path : paths) {
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (error || !fs::exists(status)) {
      return absl::NotFoundError(
          absl::StrCat("no such file or directory: '", path, "'"));
    }
    if (fs::is_regular_file(status)) {
      files.paths.push_back(path);
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(path, error)) {
      if (entry.is_regular_file(error)) files.paths.push_back(entry.path());
    }
  }
  std::sort(files.paths.begin(), files.paths.end());
  for (const std::string& path : files.paths) {
    std::error_code error;
    files.total_bytes += std::filesystem::file_size(path, error);
  }
  return files;
}

bool EvictFromPageCache(const FileSet& files) {
  bool all = true;
  for (const std::string& path : files.paths) {
    const Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0 ||
        posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED) != 0) {
      all = false;
    }
  }
  return all;
}

absl::StatusOr<ReadResult> MeasureRead(const FileSet& files, ReadMethod method,
                                       uint64_t block_size,
                                       unsigned queue_depth, bool direct) {
  if (method == ReadMethod::kIoUring) {
    absl::StatusOr<ReaderResult> read =
        RunReaderJob({.paths = files.paths,
                      .block_bytes = block_size,
                      .queue_depth = queue_depth,
                      .direct = direct});
    if (!read.ok()) return read.status();
    return ReadResult{.bytes = read->bytes,
                      .files = files.paths.size(),
                      .seconds = read->seconds,
                      .direct_refused = read->direct_refused,
                      .refusal = read->refusal};
  }
  ReadResult result;
  std::vector<std::unique_ptr<Fd>> fds;
  std::vector<Block> blocks;
  for (const std::string& path : files.paths) {
    absl::StatusOr<io::ReadableFile> opened =
        io::OpenForReading(path, direct && method == ReadMethod::kPread);
    if (!opened.ok()) return opened.status();
    if (!opened->refusal.empty()) {
      ++result.direct_refused;
      result.refusal = opened->refusal;
    }
    auto fd = std::make_unique<Fd>(opened->fd);
    struct stat info;
    fstat(fd->get(), &info);
    for (uint64_t offset = 0; offset < static_cast<uint64_t>(info.st_size);
         offset += block_size) {
      blocks.push_back({fd->get(), offset,
                        std::min<uint64_t>(block_size, info.st_size - offset)});
    }
    fds.push_back(std::move(fd));
  }
  // mmap: every file mapped once, before the clock starts.
  std::vector<std::unique_ptr<Mapping>> maps;
  if (method == ReadMethod::kMmap) {
    for (const auto& fd : fds) {
      absl::StatusOr<std::unique_ptr<Mapping>> map = Mapping::Of(fd->get());
      if (!map.ok()) return map.status();
      maps.push_back(*std::move(map));
    }
  }
  result.files = files.paths.size();
  io::AlignedBuffer buffer(block_size);
  std::memset(buffer.data(), 0, buffer.size());
  const Clock::time_point start = Clock::now();
  if (method == ReadMethod::kPread) {
    for (const Block& block : blocks) {
      // Whole blocks asked for: O_DIRECT needs them; the last reads short.
      const ssize_t got = pread(block.fd, buffer.data(), block_size,
                                static_cast<off_t>(block.offset));
      if (got < 0) return absl::UnavailableError(std::strerror(errno));
      result.bytes += got;
    }
  } else {
    // Blocks are in file order: map `f` serves the blocks of fds[f].
    size_t f = 0;
    for (const Block& block : blocks) {
      while (fds[f]->get() != block.fd) ++f;
      std::memcpy(buffer.data(), maps[f]->data() + block.offset, block.length);
      result.bytes += block.length;
    }
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

absl::StatusOr<ReadResult> MeasureSmallFiles(const FileSet& files,
                                             ReadMethod method,
                                             unsigned queue_depth) {
  ReadResult result;
  const auto start = Clock::now();
  if (method == ReadMethod::kIoUring) {
    asio::io_context io(1);
    io::AsyncFileReader reader(io, {.use_io_uring = true,
                                    .queue_depth = std::max(queue_depth, 1u),
                                    .cached_reads_inline = false});
    if (!reader.uses_io_uring()) {
      return absl::UnavailableError(
          absl::StrCat("io_uring unavailable: ", reader.fallback_reason()));
    }
    std::atomic<size_t> next{0};
    absl::Status failure;
    auto worker = [&]() -> asio::awaitable<void> {
      std::vector<std::byte> buffer;
      for (size_t i = next++; i < files.paths.size(); i = next++) {
        const Fd fd(open(files.paths[i].c_str(), O_RDONLY | O_CLOEXEC));
        if (fd.get() < 0) {
          failure = OpenError(files.paths[i]);
          co_return;
        }
        struct stat info;
        fstat(fd.get(), &info);
        buffer.resize(info.st_size);
        absl::StatusOr<size_t> got =
            co_await reader.ReadFullyAt(fd.get(), 0, buffer);
        if (!got.ok()) {
          failure = got.status();
          co_return;
        }
        result.bytes += *got;
        ++result.files;
      }
    };
    for (unsigned i = 0; i < queue_depth; ++i) {
      asio::co_spawn(io, worker(), RethrowErrors);
    }
    io.run();
    if (!failure.ok()) return failure;
  } else {
    std::vector<char> buffer;
    for (const std::string& path : files.paths) {
      const Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (fd.get() < 0) return OpenError(path);
      struct stat info;
      fstat(fd.get(), &info);
      if (method == ReadMethod::kMmap) {
        if (info.st_size > 0) {
          void* map =
              mmap(nullptr, info.st_size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
          if (map == MAP_FAILED) return absl::UnavailableError("mmap failed");
          buffer.resize(info.st_size);
          std::memcpy(buffer.data(), map, info.st_size);
          munmap(map, info.st_size);
        }
        result.bytes += info.st_size;
      } else {
        buffer.resize(info.st_size);
        const ssize_t got = pread(fd.get(), buffer.data(), info.st_size, 0);
        if (got < 0) return absl::UnavailableError(std::strerror(errno));
        result.bytes += got;
      }
      ++result.files;
    }
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace sluice::cli
