#include "stages/lc0/format/internal/file_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace sluice::lc0::internal {
namespace {

constexpr size_t kBlock = 512;
constexpr size_t kRecord = 20 * kBlock;

// Writes `value` as a NUL-terminated octal field of `width` bytes.
void PutOctal(std::string& header, size_t offset, size_t width,
              uint64_t value) {
  char digits[24];
  std::snprintf(digits, sizeof(digits), "%0*llo", static_cast<int>(width - 1),
                static_cast<unsigned long long>(value));
  header.replace(offset, width - 1, digits, width - 1);
}

}  // namespace

absl::Status AppendTarMember(std::string_view name, std::string_view data,
                             int64_t mtime, std::string& tar) {
  if (name.empty() || name.size() > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tar member name must have 1 to 100 bytes: ", std::string(name)));
  }
  std::string header(kBlock, '\0');
  header.replace(0, name.size(), name);
  PutOctal(header, 100, 8, 0644);          // mode
  PutOctal(header, 108, 8, 0);             // uid
  PutOctal(header, 116, 8, 0);             // gid
  PutOctal(header, 124, 12, data.size());  // size
  PutOctal(header, 136, 12, mtime);        // mtime
  header[156] = '0';                       // regular file
  header.replace(257, 8,
                 std::string_view("ustar\0"
                                  "00",
                                  8));
  header.replace(148, 8, "        ");
  uint64_t sum = 0;
  for (unsigned char c : header) sum += c;
  PutOctal(header, 148, 7, sum);  // six digits
  header[154] = '\0';             // then NUL and the space already there
  tar += header;
  tar.append(data);
  tar.append((kBlock - data.size() % kBlock) % kBlock, '\0');
  return absl::OkStatus();
}

void FinishTar(std::string& tar) {
  tar.append(2 * kBlock, '\0');
  tar.append((kRecord - tar.size() % kRecord) % kRecord, '\0');
}

absl::Status WriteFileAtomically(const std::string& dir,
                                 const std::string& name,
                                 std::string_view bytes) {
  const std::string path = absl::StrCat(dir, "/", name);
  const std::string temp = absl::StrCat(dir, "/.", name, ".tmp");
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", temp));
  auto fail = [&](const char* what) {
    absl::Status status = absl::ErrnoToStatus(errno, absl::StrCat(what, temp));
    if (fd >= 0) close(fd);
    unlink(temp.c_str());
    return status;
  };
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write ");
    done += static_cast<size_t>(n);
  }
  const int closed = close(fd);
  fd = -1;
  if (closed != 0) return fail("close ");
  if (rename(temp.c_str(), path.c_str()) != 0) return fail("rename ");
  return absl::OkStatus();
}

}  // namespace sluice::lc0::internal
