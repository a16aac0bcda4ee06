#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice {

std::string AtomicFileWriter::TempName(const std::string& name) {
  return absl::StrCat(".", name, ".tmp");
}

absl::StatusOr<AtomicFileWriter> AtomicFileWriter::Create(
    const std::string& dir, const std::string& name) {
  const std::string temp = absl::StrCat(dir, "/", TempName(name));
  const int fd =
      open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", temp));
  return AtomicFileWriter(fd, dir, name);
}

namespace {

// The directory ("." when none) and the name of the file at `path`.
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

absl::StatusOr<AtomicFileWriter> AtomicFileWriter::CreateForPath(
    const std::string& path) {
  auto [dir, name] = SplitPath(path);
  return Create(dir, name);
}

AtomicFileWriter::AtomicFileWriter(int fd, std::string dir, std::string name)
    : fd_(fd), dir_(std::move(dir)), name_(std::move(name)) {}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      dir_(std::move(other.dir_)),
      name_(std::move(other.name_)) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    close(fd_);
    unlink(absl::StrCat(dir_, "/", TempName(name_)).c_str());
  }
}

absl::Status AtomicFileWriter::Fail(std::string_view what) {
  const std::string temp = absl::StrCat(dir_, "/", TempName(name_));
  absl::Status status =
      absl::ErrnoToStatus(errno, absl::StrCat(std::string(what), " ", temp));
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  unlink(temp.c_str());
  return status;
}

absl::Status AtomicFileWriter::Append(std::string_view bytes) {
  if (fd_ < 0) return absl::FailedPreconditionError("file already closed");
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail("write");
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return absl::FailedPreconditionError("file already closed");
  if (fsync(fd_) != 0) return Fail("fsync");
  const int closed = close(fd_);
  fd_ = -1;
  const std::string temp = absl::StrCat(dir_, "/", TempName(name_));
  if (closed != 0 ||
      rename(temp.c_str(), absl::StrCat(dir_, "/", name_).c_str()) != 0) {
    return Fail(closed != 0 ? "close" : "rename");
  }
  const int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return absl::ErrnoToStatus(errno, "open " + dir_);
  const int synced = fsync(dir_fd);
  close(dir_fd);
  if (synced != 0) return absl::ErrnoToStatus(errno, "fsync " + dir_);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& dir,
                                 const std::string& name,
                                 std::string_view bytes) {
  absl::StatusOr<AtomicFileWriter> file = AtomicFileWriter::Create(dir, name);
  if (!file.ok()) return file.status();
  absl::Status appended = file->Append(bytes);
  if (!appended.ok()) return appended;
  return file->Commit();
}

absl::Status CheckFileWritable(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("the path is empty");
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is a directory"));
  }
  const auto [dir, name] = SplitPath(path);
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' names a directory, not a file"));
  }
  if (stat(dir.c_str(), &info) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write '", path, "': the directory '", dir, "' does not exist"));
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write '", path, "': '", dir, "' is not a directory"));
  }
  const std::string temp =
      absl::StrCat(dir, "/", AtomicFileWriter::TempName(name));
  const int fd =
      open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write '", path, "': ", std::strerror(errno)));
  }
  if (fd >= 0) {
    close(fd);
    unlink(temp.c_str());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, "open " + path);
  struct stat info;
  if (fstat(fd, &info) != 0) {
    absl::Status status = absl::ErrnoToStatus(errno, "stat " + path);
    close(fd);
    return status;
  }
  std::string bytes(static_cast<size_t>(info.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = pread(fd, bytes.data() + done, bytes.size() - done,
                            static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status status = absl::ErrnoToStatus(errno, "read " + path);
      close(fd);
      return status;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  bytes.resize(done);
  return bytes;
}

}  // namespace sluice
