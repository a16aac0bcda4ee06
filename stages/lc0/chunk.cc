#include "stages/lc0/chunk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/stable_hash.h"
#include "io/direct_file.h"
#include "io/tar_index.h"

namespace sluice::lc0 {

struct ChunkSource::File {
  ~File() {
    if (fd >= 0) ::close(fd);
  }
  // `fd` (a tar's), or a loose chunk's file opened for one read, with the
  // alignment its reads need when it was opened with O_DIRECT.
  io::AsyncFileReader::ReadRequest Request(int file_fd, uint64_t offset,
                                           std::span<std::byte> buffer) const {
    return {.fd = file_fd,
            .offset = offset,
            .buffer = buffer,
            .direct_alignment = direct_alignment};
  }
  std::string path;
  std::string name;
  Kind kind = Kind::kGzip;
  uint64_t size = 0;
  int fd = -1;                    // tar only
  uint32_t direct_alignment = 0;  // non-zero: O_DIRECT in use
  std::string direct_io_refusal;  // why asked for and not in use
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

// Opens `path` read-only (with O_DIRECT if `direct` and the file system
// takes it) and checks it is a regular file; fills `size`.
absl::StatusOr<io::ReadableFile> OpenRegular(const std::string& path,
                                             bool direct, uint64_t* size) {
  absl::StatusOr<io::ReadableFile> file = io::OpenForReading(path, direct);
  if (!file.ok()) return file.status();
  struct stat info;
  if (::fstat(file->fd, &info) != 0) {
    const int error = errno;
    ::close(file->fd);
    return ErrnoStatus(error, "cannot stat", path);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(file->fd);
    return absl::FailedPreconditionError(
        absl::StrCat("not a regular file: ", path));
  }
  *size = static_cast<uint64_t>(info.st_size);
  return file;
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
    const std::string& path, bool direct_io) {
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
  absl::StatusOr<io::ReadableFile> opened =
      OpenRegular(path, direct_io, &file->size);
  if (!opened.ok()) return opened.status();
  file->direct_alignment = opened->direct_alignment;
  file->direct_io_refusal = opened->refusal;
  if (*kind == Kind::kTar) {
    file->fd = opened->fd;
  } else {
    ::close(opened->fd);
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

std::shared_ptr<ChunkSource> ChunkSource::IndexedView(
    ChunkFilter filter) const {
  std::shared_ptr<ChunkSource> view = WithFilter(std::move(filter));
  view->apple_double_members_ = apple_double_members_;
  for (const ChunkLocation& location : locations_) {
    if (view->Keep(location.index_in_source)) {
      view->locations_.push_back(location);
    }
  }
  return view;
}

const std::string& ChunkSource::name() const { return file_->name; }
const std::string& ChunkSource::direct_io_refusal() const {
  return file_->direct_io_refusal;
}
const std::string& ChunkSource::path() const { return file_->path; }
ChunkSource::Kind ChunkSource::kind() const { return file_->kind; }
uint64_t ChunkSource::file_size() const { return file_->size; }

bool ChunkSource::Keep(uint64_t index_in_source) const {
  return !filter_ || filter_(file_->name, index_in_source);
}

asio::awaitable<absl::Status> ChunkSource::Index(io::AsyncFileReader& reader) {
  locations_.clear();
  apple_double_members_ = 0;
  if (file_->kind == Kind::kGzip) {
    if (file_->size > 0 && Keep(0)) locations_.push_back({0, 0, file_->size});
    co_return absl::OkStatus();
  }
  io::TarIndexer indexer(file_->size);
  std::string buffer;
  while (std::optional<io::TarReadRequest> read = indexer.NextRead()) {
    buffer.resize(read->length);
    absl::StatusOr<size_t> got = co_await reader.ReadFullyAt(file_->Request(
        file_->fd, read->offset,
        std::as_writable_bytes(std::span(buffer.data(), buffer.size()))));
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
    if (IsAppleDoubleMember(member.name)) {
      ++apple_double_members_;
      continue;
    }
    if (Keep(chunk_index)) {
      locations_.push_back({chunk_index, member.data_offset, member.size});
    }
    ++chunk_index;
  }
  co_return index.error;
}

asio::awaitable<absl::StatusOr<Chunk>> ChunkSource::ReadChunk(
    io::AsyncFileReader& reader, size_t i, uint64_t max_bytes) const {
  const Ref ref{this, i};
  std::vector<absl::StatusOr<Chunk>> chunks =
      co_await ReadChunks(reader, std::span(&ref, 1), max_bytes);
  co_return std::move(chunks.front());
}

asio::awaitable<std::vector<absl::StatusOr<Chunk>>> ChunkSource::ReadChunks(
    io::AsyncFileReader& reader, std::span<const Ref> refs,
    uint64_t max_bytes) {
  std::vector<absl::StatusOr<Chunk>> results(refs.size());
  // A chunk whose read is issued: refs[ref], read through `fd`.
  struct Pending {
    size_t ref = 0;
    int fd = -1;
    Chunk chunk;
  };
  std::vector<Pending> pending;
  pending.reserve(refs.size());
  std::vector<io::AsyncFileReader::ReadRequest> requests;
  requests.reserve(refs.size());
  for (size_t r = 0; r < refs.size(); ++r) {
    const File& file = *refs[r].source->file_;
    const ChunkLocation& where = refs[r].source->locations_[refs[r].index];
    if (where.size > max_bytes) {
      results[r] = absl::ResourceExhaustedError(absl::StrCat(
          "chunk ", where.index_in_source, " of ", file.path, " has ",
          where.size, " bytes; the limit is ", max_bytes));
      continue;
    }
    int fd = file.fd;
    if (file.kind == Kind::kGzip) {
      fd =
          ::open(file.path.c_str(),
                 O_RDONLY | O_CLOEXEC | (file.direct_alignment ? O_DIRECT : 0));
      if (fd < 0) {
        results[r] = ErrnoStatus(errno, "cannot open", file.path);
        continue;
      }
    }
    Pending& read = pending.emplace_back();
    read.ref = r;
    read.fd = fd;
    read.chunk.data = ChunkBytes::ForOverwrite(where.size);
    requests.push_back(
        file.Request(fd, where.offset,
                     std::as_writable_bytes(std::span(
                         read.chunk.data.data(), read.chunk.data.size()))));
  }
  std::vector<absl::StatusOr<size_t>> got;
  if (!requests.empty()) got = co_await reader.ReadBatchAt(requests);
  for (size_t k = 0; k < pending.size(); ++k) {
    Pending& read = pending[k];
    const ChunkSource& source = *refs[read.ref].source;
    const File& file = *source.file_;
    const ChunkLocation& where = source.locations_[refs[read.ref].index];
    // A short read (rare) goes on from where it stopped.
    if (got[k].ok() && *got[k] > 0 && *got[k] < where.size) {
      absl::StatusOr<size_t> rest = co_await reader.ReadFullyAt(
          file.Request(read.fd, where.offset + *got[k],
                       requests[k].buffer.subspan(*got[k])));
      got[k] =
          rest.ok() ? absl::StatusOr<size_t>(*got[k] + *rest) : rest.status();
    }
    if (file.kind == Kind::kGzip) ::close(read.fd);
    absl::StatusOr<Chunk>& result = results[read.ref];
    if (!got[k].ok()) {
      result = got[k].status();
    } else if (*got[k] < where.size) {
      result = absl::DataLossError(
          absl::StrCat(file.path, " shrank: read ", *got[k], " of ", where.size,
                       " bytes at offset ", where.offset));
    } else if (!HasGzipMagic(read.chunk.data)) {
      result = absl::InvalidArgumentError(absl::StrCat(
          "chunk ", where.index_in_source, " of ", file.path, " is not gzip"));
    } else {
      read.chunk.source_name = file.name;
      read.chunk.index_in_source = where.index_in_source;
      result = std::move(read.chunk);
    }
  }
  co_return results;
}

bool IsAppleDoubleMember(std::string_view name) {
  const size_t slash = name.rfind('/');
  const std::string_view base =
      slash == std::string_view::npos ? name : name.substr(slash + 1);
  return base.starts_with("._") || name.starts_with("__MACOSX/") ||
         name.find("/__MACOSX/") != std::string_view::npos;
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

bool IsReadFailure(const absl::Status& error) {
  return !absl::IsInvalidArgument(error) && !absl::IsResourceExhausted(error);
}

std::string_view GunzipSkipReason(const absl::Status& error) {
  switch (error.code()) {
    case absl::StatusCode::kInvalidArgument:
      return "not_gzip";
    case absl::StatusCode::kResourceExhausted:
      return "decompressed_too_large";
    default:
      return "corrupt_gzip";
  }
}

}  // namespace sluice::lc0
