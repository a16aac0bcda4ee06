#include "io/tar_index.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sluice::io {
namespace {

// Header field positions (POSIX ustar; v7 and GNU share the first ones).
constexpr size_t kNameOffset = 0, kNameSize = 100;
constexpr size_t kSizeOffset = 124, kSizeSize = 12;
constexpr size_t kChecksumOffset = 148, kChecksumSize = 8;
constexpr size_t kTypeOffset = 156;
constexpr size_t kMagicOffset = 257;
constexpr size_t kPrefixOffset = 345, kPrefixSize = 155;

uint64_t RoundUpToBlock(uint64_t n) {
  return (n + kTarBlockSize - 1) / kTarBlockSize * kTarBlockSize;
}

// The NUL-terminated string in `field` (the whole field when unterminated).
std::string_view CString(std::string_view field) {
  return field.substr(0, std::min(field.find('\0'), field.size()));
}

// Parses a numeric header field: octal ASCII (leading spaces, ending at a
// space or NUL) or GNU base-256 (first byte 0x80). nullopt when malformed or
// negative.
std::optional<uint64_t> ParseNumber(std::string_view field) {
  if (!field.empty() && (static_cast<unsigned char>(field[0]) & 0x80)) {
    if (static_cast<unsigned char>(field[0]) != 0x80) return std::nullopt;
    uint64_t value = 0;
    for (size_t i = 1; i < field.size(); ++i) {
      if (value >> 56) return std::nullopt;  // would overflow
      value = (value << 8) | static_cast<unsigned char>(field[i]);
    }
    return value;
  }
  size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  uint64_t value = 0;
  for (; i < field.size() && field[i] != ' ' && field[i] != '\0'; ++i) {
    if (field[i] < '0' || field[i] > '7' || (value >> 61)) return std::nullopt;
    value = value * 8 + (field[i] - '0');
  }
  return value;
}

// True when the stored checksum matches the header's unsigned or (historic)
// signed byte sum, counting the checksum field itself as spaces.
bool ChecksumMatches(std::string_view block) {
  std::optional<uint64_t> stored =
      ParseNumber(block.substr(kChecksumOffset, kChecksumSize));
  if (!stored) return false;
  int64_t unsigned_sum = 0, signed_sum = 0;
  for (size_t i = 0; i < kTarBlockSize; ++i) {
    bool in_field = i >= kChecksumOffset && i < kChecksumOffset + kChecksumSize;
    char c = in_field ? ' ' : block[i];
    unsigned_sum += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  return static_cast<int64_t>(*stored) == unsigned_sum ||
         static_cast<int64_t>(*stored) == signed_sum;
}

bool IsZeroBlock(std::string_view block) {
  return std::all_of(block.begin(), block.end(),
                     [](char c) { return c == '\0'; });
}

// The member name of a header without long-name or pax overrides: POSIX
// ustar joins `prefix` and `name`; GNU ("ustar  ") and v7 use `name` alone.
std::string HeaderName(std::string_view block) {
  std::string_view name = CString(block.substr(kNameOffset, kNameSize));
  if (block.substr(kMagicOffset, 6) != std::string_view("ustar\0", 6)) {
    return std::string(name);
  }
  std::string_view prefix = CString(block.substr(kPrefixOffset, kPrefixSize));
  if (prefix.empty()) return std::string(name);
  return std::string(prefix).append("/").append(name);
}

}  // namespace

TarIndexer::TarIndexer(uint64_t file_size, TarLimits limits)
    : file_size_(file_size), limits_(limits) {
  AdvanceTo(0);
}

std::optional<TarReadRequest> TarIndexer::NextRead() const {
  if (state_ == State::kFinished) return std::nullopt;
  return pending_;
}

absl::Status TarIndexer::OnData(std::string_view bytes) {
  if (state_ == State::kFinished) {
    return absl::FailedPreconditionError("tar indexing already finished");
  }
  if (bytes.size() > pending_.length) {
    return absl::InvalidArgumentError(
        absl::StrCat("got ", bytes.size(), " bytes for a read of ",
                     pending_.length, " at offset ", pending_.offset));
  }
  if (bytes.size() < pending_.length) {
    return Fail(absl::DataLossError(
        absl::StrCat("tar archive truncated: read ", bytes.size(), " of ",
                     pending_.length, " bytes at offset ", pending_.offset)));
  }
  switch (state_) {
    case State::kHeader:
      return OnHeader(bytes);
    case State::kLongName:
      return OnLongName(bytes);
    case State::kPax:
      return OnPax(bytes);
    case State::kFinished:
      break;
  }
  return absl::OkStatus();
}

TarIndex TarIndexer::TakeIndex() { return std::move(index_); }

absl::Status TarIndexer::OnHeader(std::string_view block) {
  const uint64_t offset = pending_.offset;
  if (IsZeroBlock(block)) {  // end-of-archive marker
    state_ = State::kFinished;
    return absl::OkStatus();
  }
  if (!ChecksumMatches(block)) {
    return Fail(absl::DataLossError(
        absl::StrCat("bad tar header checksum at offset ", offset,
                     offset == 0 ? " (not a tar archive?)" : "")));
  }
  std::optional<uint64_t> size =
      ParseNumber(block.substr(kSizeOffset, kSizeSize));
  if (!size) {
    return Fail(absl::DataLossError(
        absl::StrCat("bad size field in tar header at offset ", offset)));
  }
  const char type = block[kTypeOffset];
  const bool extension =
      type == 'L' || type == 'K' || type == 'x' || type == 'g';
  if (next_size_ && !extension) size = next_size_;
  const uint64_t data_offset = offset + kTarBlockSize;
  if (*size > file_size_ - data_offset) {
    return Fail(absl::DataLossError(absl::StrCat(
        "tar member at offset ", offset, " (", *size,
        " bytes) runs past the end of the file (", file_size_, " bytes)")));
  }
  const uint64_t next_header = data_offset + RoundUpToBlock(*size);
  if (type == 'L' || type == 'x') {
    const size_t limit =
        type == 'L' ? limits_.max_name_length : limits_.max_pax_size;
    if (*size > limit) {
      return Fail(absl::ResourceExhaustedError(absl::StrCat(
          "tar ", type == 'L' ? "long name" : "pax header", " at offset ",
          offset, " has ", *size, " bytes; the limit is ", limit)));
    }
    state_ = type == 'L' ? State::kLongName : State::kPax;
    pending_ = {data_offset, static_cast<size_t>(*size)};
    if (*size == 0) return OnData({});
    return absl::OkStatus();
  }
  if (type == 'K' || type == 'g') {  // long link name, global pax: unused
    AdvanceTo(next_header);
    return index_.error;
  }
  std::string name = next_name_ ? *std::move(next_name_) : HeaderName(block);
  next_name_.reset();
  next_size_.reset();
  // '0' and '7' are files; v7 archives mark files with '\0' and directories
  // with a trailing '/'.
  const bool regular = type == '0' || type == '7' ||
                       (type == '\0' && !name.empty() && name.back() != '/');
  if (regular) {
    if (name.size() > limits_.max_name_length) {
      return Fail(absl::ResourceExhaustedError(absl::StrCat(
          "tar member name at offset ", offset, " has ", name.size(),
          " bytes; the limit is ", limits_.max_name_length)));
    }
    if (index_.members.size() >= limits_.max_members) {
      return Fail(absl::ResourceExhaustedError(absl::StrCat(
          "tar archive has more than ", limits_.max_members, " members")));
    }
    index_.members.push_back({std::move(name), data_offset, *size});
  }
  AdvanceTo(next_header);
  return index_.error;
}

absl::Status TarIndexer::OnLongName(std::string_view payload) {
  next_name_ = std::string(CString(payload));
  AdvanceTo(pending_.offset + RoundUpToBlock(pending_.length));
  return index_.error;
}

// Pax records are "<length> <key>=<value>\n", length counting the whole
// record in decimal.
absl::Status TarIndexer::OnPax(std::string_view payload) {
  const uint64_t header_offset = pending_.offset - kTarBlockSize;
  const uint64_t next_header =
      pending_.offset + RoundUpToBlock(pending_.length);
  auto malformed = [&] {
    return Fail(absl::DataLossError(
        absl::StrCat("malformed pax header at offset ", header_offset)));
  };
  while (!payload.empty()) {
    size_t length = 0, i = 0;
    for (; i < payload.size() && payload[i] >= '0' && payload[i] <= '9'; ++i) {
      if (length > payload.size()) return malformed();
      length = length * 10 + (payload[i] - '0');
    }
    if (i == 0 || i >= payload.size() || payload[i] != ' ' || length <= i + 1 ||
        length > payload.size() || payload[length - 1] != '\n') {
      return malformed();
    }
    std::string_view record = payload.substr(i + 1, length - i - 2);
    payload.remove_prefix(length);
    const size_t eq = record.find('=');
    if (eq == std::string_view::npos) return malformed();
    std::string_view key = record.substr(0, eq);
    std::string_view value = record.substr(eq + 1);
    if (key == "path") {
      next_name_ = std::string(value);
    } else if (key == "size") {
      uint64_t size = 0;
      if (value.empty() || value.size() > 19) return malformed();
      for (char c : value) {
        if (c < '0' || c > '9') return malformed();
        size = size * 10 + (c - '0');
      }
      next_size_ = size;
    }
  }
  AdvanceTo(next_header);
  return index_.error;
}

void TarIndexer::AdvanceTo(uint64_t offset) {
  state_ = State::kHeader;
  if (offset == file_size_) {  // EOF at a header boundary: a clean end
    state_ = State::kFinished;
  } else if (offset > file_size_ || file_size_ - offset < kTarBlockSize) {
    Fail(absl::DataLossError(
             absl::StrCat("tar archive truncated: ", file_size_,
                          " bytes end inside the block at offset ", offset)))
        .IgnoreError();
  } else {
    pending_ = {offset, kTarBlockSize};
  }
}

absl::Status TarIndexer::Fail(absl::Status error) {
  state_ = State::kFinished;
  index_.error = error;
  return error;
}

absl::StatusOr<TarIndex> IndexTarFile(int fd, uint64_t file_size,
                                      const TarLimits& limits) {
  TarIndexer indexer(file_size, limits);
  std::string buffer;
  while (std::optional<TarReadRequest> read = indexer.NextRead()) {
    buffer.resize(read->length);
    size_t done = 0;
    while (done < read->length) {
      ssize_t n = pread(fd, buffer.data() + done, read->length - done,
                        static_cast<off_t>(read->offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return absl::ErrnoToStatus(
            errno, absl::StrCat("pread of tar archive at offset ",
                                read->offset + done));
      }
      if (n == 0) break;  // the file is shorter than file_size
      done += static_cast<size_t>(n);
    }
    // A damaged archive is reported through the index, not as a failure.
    indexer.OnData(std::string_view(buffer.data(), done)).IgnoreError();
  }
  return indexer.TakeIndex();
}

}  // namespace sluice::io
