#include "stages/lc0/chunk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/tar_index.h"
#include "stages/lc0/internal/stable_hash.h"

namespace sluice::lc0 {

struct ChunkSource::File {
  ~File() {
    if (fd >= 0) ::close(fd);
  }
  std::string path;
  std::string name;
  Kind kind = Kind::kGzip;
  uint64_t size = 0;
  int fd = -1;  // tar only
};

namespace {

absl::Status ErrnoStatus(int error, std::string_view what,
                         const std::string& path) {
  return absl::ErrnoToStatus(error, absl::StrCat(std::string(what), " ", path));
}

bool HasGzipMagic(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

// Opens `path` read-only and checks it is a regular file; returns the fd
// and fills `size`.
absl::StatusOr<int> OpenRegular(const std::string& path, uint64_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return ErrnoStatus(error, "cannot stat", path);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("not a regular file: ", path));
  }
  *size = static_cast<uint64_t>(info.st_size);
  return fd;
}

}  // namespace

uint64_t ChunkId(std::string_view source_name, uint64_t index_in_source) {
  return HashCombine(Fnv1a64(source_name), index_in_source);
}

uint64_t Chunk::id() const { return ChunkId(source_name, index_in_source); }

std::optional<ChunkSource::Kind> ChunkSource::KindOf(std::string_view path) {
  if (path.ends_with(".tar")) return Kind::kTar;
  if (path.ends_with(".gz")) return Kind::kGzip;
  return std::nullopt;
}

absl::StatusOr<std::shared_ptr<ChunkSource>> ChunkSource::Open(
    const std::string& path) {
  const std::optional<Kind> kind = KindOf(path);
  if (!kind) {
    return absl::InvalidArgumentError(
        absl::StrCat("neither .tar nor .gz: ", path));
  }
  auto file = std::make_shared<File>();
  file->path = path;
  const size_t slash = path.rfind('/');
  file->name = slash == std::string::npos ? path : path.substr(slash + 1);
  file->kind = *kind;
  absl::StatusOr<int> fd = OpenRegular(path, &file->size);
  if (!fd.ok()) return fd.status();
  if (*kind == Kind::kTar) {
    file->fd = *fd;
  } else {
    ::close(*fd);
  }
  return std::shared_ptr<ChunkSource>(new ChunkSource(std::move(file), {}));
}

ChunkSource::ChunkSource(std::shared_ptr<const File> file, ChunkFilter filter)
    : file_(std::move(file)), filter_(std::move(filter)) {}

ChunkSource::~ChunkSource() = default;

std::shared_ptr<ChunkSource> ChunkSource::WithFilter(ChunkFilter filter) const {
  ChunkFilter combined = filter;
  if (filter_) {
    combined = [outer = filter_, inner = std::move(filter)](
                   std::string_view name, uint64_t index) {
      return outer(name, index) && inner(name, index);
    };
  }
  return std::shared_ptr<ChunkSource>(
      new ChunkSource(file_, std::move(combined)));
}

const std::string& ChunkSource::name() const { return file_->name; }
const std::string& ChunkSource::path() const { return file_->path; }
ChunkSource::Kind ChunkSource::kind() const { return file_->kind; }
uint64_t ChunkSource::file_size() const { return file_->size; }

bool ChunkSource::Keep(uint64_t index_in_source) const {
  return !filter_ || filter_(file_->name, index_in_source);
}

asio::awaitable<absl::Status> ChunkSource::Index(io::AsyncFileReader& reader) {
  locations_.clear();
  if (file_->kind == Kind::kGzip) {
    if (file_->size > 0 && Keep(0)) locations_.push_back({0, 0, file_->size});
    co_return absl::OkStatus();
  }
  io::TarIndexer indexer(file_->size);
  std::string buffer;
  while (std::optional<io::TarReadRequest> read = indexer.NextRead()) {
    buffer.resize(read->length);
    absl::StatusOr<size_t> got = co_await reader.ReadFullyAt(
        file_->fd, read->offset,
        std::as_writable_bytes(std::span(buffer.data(), buffer.size())));
    if (!got.ok()) {
      locations_.clear();
      co_return got.status();
    }
    // Damage is also kept in the index; read it from there below.
    indexer.OnData(std::string_view(buffer.data(), *got)).IgnoreError();
  }
  io::TarIndex index = indexer.TakeIndex();
  uint64_t chunk_index = 0;
  for (const io::TarMember& member : index.members) {
    if (!member.name.ends_with(".gz")) continue;
    if (Keep(chunk_index)) {
      locations_.push_back({chunk_index, member.data_offset, member.size});
    }
    ++chunk_index;
  }
  co_return index.error;
}

asio::awaitable<absl::StatusOr<Chunk>> ChunkSource::ReadChunk(
    io::AsyncFileReader& reader, size_t i, uint64_t max_bytes) const {
  const ChunkLocation& where = locations_[i];
  if (where.size > max_bytes) {
    co_return absl::ResourceExhaustedError(
        absl::StrCat("chunk ", where.index_in_source, " of ", file_->path,
                     " has ", where.size, " bytes; the limit is ", max_bytes));
  }
  int fd = file_->fd;
  if (file_->kind == Kind::kGzip) {
    fd = ::open(file_->path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) co_return ErrnoStatus(errno, "cannot open", file_->path);
  }
  Chunk chunk;
  chunk.data.resize(where.size);
  absl::StatusOr<size_t> got = co_await reader.ReadFullyAt(
      fd, where.offset,
      std::as_writable_bytes(std::span(chunk.data.data(), chunk.data.size())));
  if (file_->kind == Kind::kGzip) ::close(fd);
  if (!got.ok()) co_return got.status();
  if (*got < where.size) {
    co_return absl::DataLossError(
        absl::StrCat(file_->path, " shrank: read ", *got, " of ", where.size,
                     " bytes at offset ", where.offset));
  }
  if (!HasGzipMagic(chunk.data)) {
    co_return absl::InvalidArgumentError(absl::StrCat(
        "chunk ", where.index_in_source, " of ", file_->path, " is not gzip"));
  }
  chunk.source_name = file_->name;
  chunk.index_in_source = where.index_in_source;
  co_return chunk;
}

std::string_view IndexSkipReason(const absl::Status& error) {
  // io::TarIndexer reports damage as DataLoss / ResourceExhausted with
  // these phrases (io/tar_index.cc); tests pin each case.
  if (absl::IsResourceExhausted(error)) return "tar_limit_exceeded";
  if (!absl::IsDataLoss(error)) return "read_error";
  const std::string message(error.message());
  auto contains = [&](std::string_view phrase) {
    return message.find(phrase) != std::string::npos;
  };
  if (contains("checksum")) return "tar_bad_checksum";
  if (contains("past the end")) return "tar_member_past_eof";
  if (contains("truncated")) return "tar_truncated";
  return "tar_malformed";
}

std::string_view ReadSkipReason(const absl::Status& error) {
  switch (error.code()) {
    case absl::StatusCode::kNotFound:
      return "file_missing";
    case absl::StatusCode::kPermissionDenied:
      return "permission_denied";
    case absl::StatusCode::kInvalidArgument:
      return "not_gzip";
    case absl::StatusCode::kResourceExhausted:
      return "chunk_too_large";
    case absl::StatusCode::kDataLoss:
      return "file_truncated";
    default:
      return "read_error";
  }
}

}  // namespace sluice::lc0
