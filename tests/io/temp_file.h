// TempFile: a temporary file of pseudo-random bytes for the reader tests,
// removed at destruction.
#ifndef SLUICE_TESTS_IO_TEMP_FILE_H_
#define SLUICE_TESTS_IO_TEMP_FILE_H_

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace sluice::io {

class TempFile {
 public:
  // `size` bytes in a new file under `directory` (a deterministic sequence
  // per `seed`), left in the page cache.
  explicit TempFile(size_t size, const std::string& directory = "/tmp",
                    uint64_t seed = 12345) {
    std::string pattern = directory + "/sluice_reader_test_XXXXXX";
    fd_ = mkstemp(pattern.data());
    EXPECT_GE(fd_, 0) << pattern;
    path_ = pattern;
    content_.resize(size);
    uint64_t state = seed;
    for (char& byte : content_) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      byte = static_cast<char>(state >> 56);
    }
    EXPECT_EQ(write(fd_, content_.data(), size), static_cast<ssize_t>(size));
  }
  ~TempFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  const std::string& content() const { return content_; }

  // Writes the file back and drops its pages from the page cache (clean
  // pages leave on DONTNEED on ext4, xfs, btrfs), so reads wait for the
  // disk.
  void Evict() const {
    ASSERT_EQ(fdatasync(fd_), 0);
    ASSERT_EQ(posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED), 0);
  }

 private:
  int fd_ = -1;
  std::string path_;
  std::string content_;
};

}  // namespace sluice::io

#endif  // SLUICE_TESTS_IO_TEMP_FILE_H_
