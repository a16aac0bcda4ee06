// A sequential read of files through sluice's io::AsyncFileReader, as
// `sluice bench io` measures it (its io_uring rows and its fio comparison),
// set up the way fio sets up its own jobs so that the two compare like for
// like:
// - `queue_depth` coroutines share a cursor over the blocks and a FIFO
//   list of `queue_depth` page-aligned buffers carved from one allocation:
//   a read takes the buffer at the front and gives it back at the end, so
//   reads cycle through all of them as fio cycles through its io_u buffers;
// - files are opened with POSIX_FADV_SEQUENTIAL (fio's fadvise_hint);
// - the clock runs from before the first open to after the last read, so
//   opening, the eviction of each pass (evict_each_pass, fio's invalidate=1)
//   and the registration of the files fall inside it as they do in fio;
//   the ring, the buffers and their registration are set up before it.
//
//   absl::StatusOr<ReaderResult> result = RunReaderJob(
//       {.paths = {path}, .block_bytes = 1 << 20, .queue_depth = 32,
//        .min_seconds = 2});
#ifndef SLUICE_BINDINGS_CLI_READER_JOB_H_
#define SLUICE_BINDINGS_CLI_READER_JOB_H_

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::cli {

struct ReaderJob {
  std::vector<std::string> paths;
  uint64_t block_bytes = 1 << 20;
  unsigned queue_depth = 32;
  // Read only the first `region_bytes` of each file (fio --size); 0: all.
  uint64_t region_bytes = 0;
  // Leave out a last partial block (fio reads whole blocks only).
  bool whole_blocks_only = false;
  // O_DIRECT where the file system allows it (see io/direct_file.h).
  bool direct = false;
  // Registered buffers and files (fio --fixedbufs --registerfiles).
  bool registered = false;
  // sluice's default path: what the page cache holds is copied at once
  // (preadv2 RWF_NOWAIT); false sends every read to the ring.
  bool cached_reads_inline = false;
  // Open each pass anew and drop the region's pages first, inside the
  // clock (fio --invalidate=1 with --loops); otherwise open once.
  bool evict_each_pass = false;
  // At least this many passes, then more until `min_seconds` have passed
  // (the last pass may stop part way).
  int passes = 1;
  double min_seconds = 0;
  // false: the pread threads, for a machine without io_uring.
  bool use_io_uring = true;
};

struct ReaderResult {
  uint64_t bytes = 0;
  double seconds = 0;
  // Files opened buffered although O_DIRECT was asked for, and why.
  uint64_t direct_refused = 0;
  std::string refusal;
  double GigabytesPerSecond() const {
    return seconds > 0 ? bytes / seconds / 1e9 : 0;
  }
};

// Runs `job` on the calling thread (an io_context of its own). Errors: a
// file cannot be opened or read, io_uring or (with `registered`) buffer
// registration is unavailable.
absl::StatusOr<ReaderResult> RunReaderJob(const ReaderJob& job);

// The completion handler of the measuring coroutines (`asio::co_spawn`'s
// last argument): a coroutine's exception leaves `io_context::run()`.
void RethrowErrors(std::exception_ptr error);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_READER_JOB_H_
