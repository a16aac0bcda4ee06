// Read-throughput measurements behind `sluice bench io`: the same files read
// through sluice's io_uring reader with many reads in flight (every read
// sent to the ring, none copied inline from the page cache; see
// reader_job.h), plain pread, and mmap, at a given block size, optionally
// with O_DIRECT (io_uring and pread); and small-file mode (open + read +
// close per file). Cold runs first evict the files' pages with
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

// "64KiB", "1MiB"; "whole" for 0 (small-file mode).
std::string BlockName(uint64_t block_bytes);

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
  // Files read buffered although O_DIRECT was asked for, and why.
  uint64_t direct_refused = 0;
  std::string refusal;
  double GigabytesPerSecond() const {
    return seconds > 0 ? bytes / seconds / 1e9 : 0;
  }
  double FilesPerSecond() const { return seconds > 0 ? files / seconds : 0; }
};

// Evicts the files' pages from the page cache; false if the kernel refused.
bool EvictFromPageCache(const FileSet& files);

// Reads every file whole in `block_size` blocks, once. io_uring keeps
// `queue_depth` reads in flight; pread and mmap read one block at a time.
// With `direct`, io_uring and pread open the files with O_DIRECT where the
// file system allows it (page-aligned buffers, whole blocks asked for; the
// last block of a file reads short); mmap ignores it.
absl::StatusOr<ReadResult> MeasureRead(const FileSet& files, ReadMethod method,
                                       uint64_t block_size,
                                       unsigned queue_depth,
                                       bool direct = false);

// Small-file mode: open + read whole + close per file; io_uring keeps
// `queue_depth` files in flight.
absl::StatusOr<ReadResult> MeasureSmallFiles(const FileSet& files,
                                             ReadMethod method,
                                             unsigned queue_depth);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_IO_THROUGHPUT_H_
