// Read-throughput measurements behind `sluice bench io`: the same files read
// through sluice's io_uring reader with many reads in flight (every read
// sent to the ring, none copied inline from the page cache), plain pread,
// and mmap, at a given block size; and small-file mode (open + read + close
// per file). Cold runs first evict the files' pages with
// posix_fadvise(POSIX_FADV_DONTNEED).
#ifndef SLUICE_BINDINGS_CLI_IO_THROUGHPUT_H_
#define SLUICE_BINDINGS_CLI_IO_THROUGHPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::cli {

enum class ReadMethod { kIoUring, kPread, kMmap };

// "io_uring", "pread" or "mmap".
const char* ReadMethodName(ReadMethod method);

struct FileSet {
  std::vector<std::string> paths;
  uint64_t total_bytes = 0;
};

// The regular files under `paths` (files as given, directories walked
// recursively), sorted. An error names a path that does not exist.
absl::StatusOr<FileSet> CollectFiles(const std::vector<std::string>& paths);

struct ReadResult {
  uint64_t bytes = 0;
  uint64_t files = 0;
  double seconds = 0;
  double GigabytesPerSecond() const {
    return seconds > 0 ? bytes / seconds / 1e9 : 0;
  }
  double FilesPerSecond() const { return seconds > 0 ? files / seconds : 0; }
};

// Evicts the files' pages from the page cache; false if the kernel refused.
bool EvictFromPageCache(const FileSet& files);

// Reads every file whole in `block_size` blocks, once, or pass after pass
// until `min_seconds` have gone by (the last pass may stop part way).
// io_uring keeps `queue_depth` reads in flight; pread and mmap read one
// block at a time.
absl::StatusOr<ReadResult> MeasureRead(const FileSet& files, ReadMethod method,
                                       uint64_t block_size,
                                       unsigned queue_depth,
                                       double min_seconds = 0);

// Small-file mode: open + read whole + close per file; io_uring keeps
// `queue_depth` files in flight.
absl::StatusOr<ReadResult> MeasureSmallFiles(const FileSet& files,
                                             ReadMethod method,
                                             unsigned queue_depth);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_IO_THROUGHPUT_H_
