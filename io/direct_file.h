// Opening a file to read, optionally with O_DIRECT: reads that go from the
// device straight into the caller's memory and bypass the page cache, so
// that one pass over a data set larger than memory does not evict what the
// trainer keeps cached.
//
//   absl::StatusOr<ReadableFile> file = OpenForReading(path, /*direct=*/true);
//   if (!file->refusal.empty()) { /* count it, warn once: read buffered */ }
//   AsyncFileReader::ReadRequest request{.fd = file->fd, ...,
//       .direct_alignment = file->direct_alignment};
//
// Promises:
// - With `direct`, the file is opened with O_DIRECT when its file system
//   does direct I/O; otherwise (open refuses O_DIRECT, statx says the file
//   has no direct I/O, or the file lives in memory: tmpfs, ramfs) it is
//   opened buffered and `refusal` says why. Never an error for that alone.
// - direct_alignment is the offset, length and memory alignment O_DIRECT
//   reads of the file need (statx STATX_DIOALIGN where the kernel reports
//   it, else a page), 0 for a buffered file. io::AsyncFileReader reads
//   requests that are not aligned through an aligned bounce buffer.
// - The caller owns `fd` (close it).
#ifndef SLUICE_IO_DIRECT_FILE_H_
#define SLUICE_IO_DIRECT_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace sluice::io {

struct ReadableFile {
  int fd = -1;
  // Non-zero when opened with O_DIRECT.
  uint32_t direct_alignment = 0;
  // Why O_DIRECT was asked for and not used; empty otherwise.
  std::string refusal;
};

// Opens `path` read-only (O_CLOEXEC), with O_DIRECT if `direct` and the file
// system allows it. Errors: the file cannot be opened at all.
absl::StatusOr<ReadableFile> OpenForReading(const std::string& path,
                                            bool direct);

}  // namespace sluice::io

#endif  // SLUICE_IO_DIRECT_FILE_H_
