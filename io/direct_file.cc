#include "io/direct_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace sluice::io {
namespace {

constexpr uint32_t kPageBytes = 4096;
// statfs f_type of file systems that keep files in memory.
constexpr long kTmpfsMagic = 0x01021994;
constexpr long kRamfsMagic = 0x858458f6;

absl::Status OpenError(const std::string& path) {
  return absl::Status(
      absl::ErrnoToStatusCode(errno),
      absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
}

// Why O_DIRECT does not apply to the open file `fd`, or empty (and the
// alignment its reads need in *alignment).
std::string DirectIoRefusal(int fd, uint32_t* alignment) {
  struct statfs fs;
  if (fstatfs(fd, &fs) == 0 &&
      (fs.f_type == kTmpfsMagic || fs.f_type == kRamfsMagic)) {
    return "the file system keeps files in memory (tmpfs/ramfs)";
  }
  struct statx info;
  *alignment = kPageBytes;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &info) == 0 &&
      (info.stx_mask & STATX_DIOALIGN) != 0) {
    if (info.stx_dio_offset_align == 0) {
      return "the file system does no direct I/O on this file (statx)";
    }
    *alignment = std::max(info.stx_dio_offset_align, info.stx_dio_mem_align);
  }
  return {};
}

}  // namespace

absl::StatusOr<ReadableFile> OpenForReading(const std::string& path,
                                            bool direct) {
  ReadableFile file;
  if (direct) {
    file.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (file.fd >= 0) {
      uint32_t alignment = 0;
      file.refusal = DirectIoRefusal(file.fd, &alignment);
      if (file.refusal.empty()) {
        file.direct_alignment = alignment;
        return file;
      }
      close(file.fd);
    } else if (errno == EINVAL) {
      file.refusal = "the file system refuses O_DIRECT (EINVAL)";
    } else {
      return OpenError(path);
    }
  }
  file.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) return OpenError(path);
  return file;
}

}  // namespace sluice::io
