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

// ChunkBytes buffers: 4 KiB, then four sizes per doubling (5, 6, 7 and 8
// KiB; 10, 12, 14 and 16 KiB; ...) up to 1 MiB, so that at most a fifth of
// a buffer goes unused; recycled through one free list per size, at most
// kMaxFreeBytes in all.
constexpr size_t kSmallestBuffer = size_t{1} << 12;
constexpr size_t kLargestRecycled = size_t{1} << 20;
constexpr size_t kMaxFreeBytes = size_t{32} << 20;
constexpr size_t kSizesPerDoubling = 4;
constexpr size_t kRecycledSizes =
    1 + kSizesPerDoubling * (std::countr_zero(kLargestRecycled) -
                             std::countr_zero(kSmallestBuffer));

// The capacity that holds `size` bytes (size > 0).
size_t CapacityFor(size_t size) {
  if (size > kLargestRecycled) return size;
  if (size <= kSmallestBuffer) return kSmallestBuffer;
  const size_t step = std::bit_floor(size - 1) / kSizesPerDoubling;
  return (size + step - 1) / step * step;
}

// The free list of a recycled capacity (a CapacityFor value).
size_t ListOf(size_t capacity) {
  if (capacity == kSmallestBuffer) return 0;
  const size_t base = std::bit_floor(capacity - 1);
  const size_t doubling = static_cast<size_t>(
      std::countr_zero(base) - std::countr_zero(kSmallestBuffer));
  return doubling * kSizesPerDoubling +
         (capacity - base) / (base / kSizesPerDoubling);
}

// The process-wide free lists of ChunkBytes buffers; thread-safe.
class FreeBuffers {
 public:
  // Never destroyed: chunks may outlive every pool, even main().
  static FreeBuffers& Get() {
    static FreeBuffers* const free_buffers = new FreeBuffers;
    return *free_buffers;
  }

  // A buffer of `capacity` bytes (a recycled size), contents unspecified.
  std::unique_ptr<char[]> Take(size_t capacity) {
    {
      std::lock_guard lock(mu_);
      std::vector<std::unique_ptr<char[]>>& list = lists_[ListOf(capacity)];
      if (!list.empty()) {
        std::unique_ptr<char[]> memory = std::move(list.back());
        list.pop_back();
        free_bytes_ -= capacity;
        return memory;
      }
    }
    return std::make_unique_for_overwrite<char[]>(capacity);
  }

  // Keeps `memory` for reuse unless the lists are full.
  void Give(std::unique_ptr<char[]> memory, size_t capacity) {
    {
      std::lock_guard lock(mu_);
      if (free_bytes_ + capacity <= kMaxFreeBytes) {
        lists_[ListOf(capacity)].push_back(std::move(memory));
        free_bytes_ += capacity;
        return;
      }
    }
    memory.reset();  // outside the lock
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<char[]>> lists_[kRecycledSizes];
  size_t free_bytes_ = 0;
};

}  // namespace

ChunkBytes::ChunkBytes(std::string_view bytes)
    : ChunkBytes(ForOverwrite(bytes.size())) {
  if (!bytes.empty()) std::memcpy(data(), bytes.data(), bytes.size());
}

ChunkBytes& ChunkBytes::operator=(const ChunkBytes& other) {
  if (this != &other) *this = ChunkBytes(std::string_view(other));
  return *this;
}

ChunkBytes::ChunkBytes(ChunkBytes&& other) noexcept
    : memory_(std::move(other.memory_)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

ChunkBytes& ChunkBytes::operator=(ChunkBytes&& other) noexcept {
  if (this != &other) {
    Release();
    memory_ = std::move(other.memory_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

ChunkBytes::~ChunkBytes() { Release(); }

ChunkBytes ChunkBytes::ForOverwrite(size_t size) {
  ChunkBytes bytes;
  if (size == 0) return bytes;
  bytes.capacity_ = CapacityFor(size);
  bytes.memory_ = bytes.capacity_ <= kLargestRecycled
                      ? FreeBuffers::Get().Take(bytes.capacity_)
                      : std::make_unique_for_overwrite<char[]>(size);
  bytes.size_ = size;
  return bytes;
}

void ChunkBytes::resize(size_t size) {
  if (size <= capacity_) {
    size_ = size;
    return;
  }
  ChunkBytes larger = ForOverwrite(size);
  if (size_ > 0) std::memcpy(larger.data(), data(), size_);
  *this = std::move(larger);
}

void ChunkBytes::Release() {
  if (memory_ != nullptr && capacity_ <= kLargestRecycled) {
    FreeBuffers::Get().Give(std::move(memory_), capacity_);
  }
  memory_.reset();
  size_ = 0;
  capacity_ = 0;
}

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
  apple_double_members_ = 0;
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
      fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        results[r] = ErrnoStatus(errno, "cannot open", file.path);
        continue;
      }
    }
    Pending& read = pending.emplace_back();
    read.ref = r;
    read.fd = fd;
    read.chunk.data = ChunkBytes::ForOverwrite(where.size);
    requests.push_back({fd, where.offset,
                        std::as_writable_bytes(std::span(
                            read.chunk.data.data(), read.chunk.data.size()))});
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
          read.fd, where.offset + *got[k], requests[k].buffer.subspan(*got[k]));
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

}  // namespace sluice::lc0
