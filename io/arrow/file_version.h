// FileVersion: what tells one version of a file from another, from fstat:
// a file replaced (another inode) or written since (size, modification or
// change time) compares unequal. The change time is the kernel's and
// cannot be set back by a writer, so a file whose versions compare equal
// has not been written in between. Lets a reader keep what it learned of a
// file's layout from one open to the next.
#ifndef SLUICE_IO_ARROW_FILE_VERSION_H_
#define SLUICE_IO_ARROW_FILE_VERSION_H_

#include <sys/stat.h>

#include <cstdint>

namespace sluice::io::arrow {

struct FileVersion {
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t size = 0;
  int64_t modified_ns = 0;
  int64_t changed_ns = 0;

  // The version `info` (from stat or fstat) describes.
  static FileVersion Of(const struct stat& info) {
    const auto ns = [](const timespec& time) {
      return static_cast<int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
    };
    return {.device = static_cast<uint64_t>(info.st_dev),
            .inode = static_cast<uint64_t>(info.st_ino),
            .size = static_cast<int64_t>(info.st_size),
            .modified_ns = ns(info.st_mtim),
            .changed_ns = ns(info.st_ctim)};
  }

  bool operator==(const FileVersion&) const = default;
};

}  // namespace sluice::io::arrow

#endif  // SLUICE_IO_ARROW_FILE_VERSION_H_
