#include "stages/batch_queue/internal/lc0_batch_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/atomic_file.h"
#include "io/batch_queue_layout.h"

namespace sluice::batch_queue {
namespace {

using lc0::TensorBatch;
using lc0::TensorId;

// First read of a file: enough for any batch-file header we write.
constexpr size_t kHeadBytes = 64 * 1024;

// Reads up to `size` bytes at `offset`; the count read, or an error.
absl::StatusOr<size_t> ReadAt(int fd, char* out, size_t size, uint64_t offset,
                              const std::string& path) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n =
        pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, "read " + path);
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

}  // namespace

const std::vector<FieldSpec>& Lc0BatchSchema() {
  static const auto* kSchema = [] {
    auto* schema = new std::vector<FieldSpec>;
    absl::StatusOr<TensorBatch> sample = TensorBatch::Create(1);
    for (int t = 0; t < lc0::kNumTensors; ++t) {
      const lc0::TensorView view = sample->view(static_cast<TensorId>(t));
      schema->push_back(
          FieldSpec{.name = std::string(view.name),
                    .dtype = "F32",
                    .shape = std::vector<int64_t>(
                        view.shape.begin() + 1, view.shape.begin() + view.rank),
                    .role = t == 0 ? "input" : "target"});
    }
    return schema;
  }();
  return *kSchema;
}

absl::StatusOr<std::string> WriteLc0BatchFile(
    const std::string& dir, const std::string& split, int64_t sequence,
    int64_t now_ms, std::span<const TensorBatch> batches, uint64_t* bytes) {
  if (batches.empty()) {
    return absl::InvalidArgumentError("a batch file needs at least 1 batch");
  }
  BatchFileInfo info{.batch_size = static_cast<int64_t>(batches[0].size()),
                     .num_batches = static_cast<int64_t>(batches.size()),
                     .sequence = sequence,
                     .split = split,
                     .produced_at_ms = now_ms,
                     .schema = Lc0BatchSchema()};
  absl::StatusOr<std::string> header = EncodeBatchFileHeader(info);
  if (!header.ok()) return header.status();
  const std::string name = QueueFileName(now_ms, sequence, info.num_batches);
  absl::StatusOr<AtomicFileWriter> file = AtomicFileWriter::Create(dir, name);
  if (!file.ok()) return file.status();
  absl::Status status = file->Append(*header);
  uint64_t written = header->size();
  for (int t = 0; t < lc0::kNumTensors && status.ok(); ++t) {
    for (const TensorBatch& batch : batches) {
      const lc0::TensorView view = batch.view(static_cast<TensorId>(t));
      status = file->Append(std::string_view(
          reinterpret_cast<const char*>(view.data), view.bytes));
      if (!status.ok()) break;
      written += view.bytes;
    }
  }
  if (status.ok()) status = file->Commit();
  if (!status.ok()) return status;
  *bytes += written;
  return name;
}

absl::StatusOr<Lc0BatchFile> Lc0BatchFile::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, "open " + path);
  // Owns `fd` until the file object takes it.
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) close(fd);
    }
  } closer{fd};
  struct stat stat_buf;
  if (fstat(fd, &stat_buf) != 0) {
    return absl::ErrnoToStatus(errno, "stat " + path);
  }
  const auto file_size = static_cast<uint64_t>(stat_buf.st_size);
  std::string head(std::min<uint64_t>(file_size, kHeadBytes), '\0');
  absl::StatusOr<size_t> got = ReadAt(fd, head.data(), head.size(), 0, path);
  if (!got.ok()) return got.status();
  head.resize(*got);
  if (head.size() >= 8) {
    const uint64_t needed = SafetensorsPrefixBytes(head);
    if (needed > head.size() && needed <= file_size &&
        needed - 8 <= kMaxSafetensorsHeaderBytes) {
      const size_t have = head.size();
      head.resize(needed);
      got = ReadAt(fd, head.data() + have, needed - have, have, path);
      if (!got.ok()) return got.status();
      head.resize(have + *got);
    }
  }
  absl::StatusOr<BatchFileLayout> layout = ParseBatchFile(head, file_size);
  if (!layout.ok()) {
    return absl::DataLossError(
        absl::StrCat(path, ": ", std::string(layout.status().message())));
  }
  absl::Status same =
      CheckSameSchema(Lc0BatchSchema(), layout->info.schema, path);
  if (!same.ok()) return same;
  closer.fd = -1;
  return Lc0BatchFile(fd, path, file_size, *std::move(layout));
}

Lc0BatchFile::Lc0BatchFile(int fd, std::string path, uint64_t file_size,
                           BatchFileLayout layout)
    : fd_(fd),
      path_(std::move(path)),
      file_size_(file_size),
      layout_(std::move(layout)) {}

Lc0BatchFile::Lc0BatchFile(Lc0BatchFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      file_size_(other.file_size_),
      layout_(std::move(other.layout_)) {}

Lc0BatchFile::~Lc0BatchFile() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<std::array<Lc0BatchFile::Piece, lc0::kNumTensors>>
Lc0BatchFile::Pieces(int64_t index, const TensorBatch& batch) const {
  std::array<Piece, lc0::kNumTensors> pieces;
  for (int t = 0; t < lc0::kNumTensors; ++t) {
    const lc0::TensorView view = batch.view(static_cast<TensorId>(t));
    const SafetensorsTensor& field = layout_.fields[t];
    if (field.bytes !=
        view.bytes * static_cast<uint64_t>(layout_.info.num_batches)) {
      return absl::DataLossError(path_ + ": field sizes do not match");
    }
    pieces[t] = {
        .offset = field.offset + view.bytes * index,
        .data = std::span(reinterpret_cast<std::byte*>(view.data), view.bytes)};
  }
  return pieces;
}

absl::StatusOr<TensorBatch> Lc0BatchFile::ReadBatch(
    int64_t index, std::shared_ptr<BatchBufferPool> pool) const {
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(
      static_cast<size_t>(layout_.info.batch_size), std::move(pool));
  if (!batch.ok()) return batch.status();
  absl::StatusOr<std::array<Piece, lc0::kNumTensors>> pieces =
      Pieces(index, *batch);
  if (!pieces.ok()) return pieces.status();
  for (const Piece& piece : *pieces) {
    absl::StatusOr<size_t> got =
        ReadAt(fd_, reinterpret_cast<char*>(piece.data.data()),
               piece.data.size(), piece.offset, path_);
    if (!got.ok()) return got.status();
    if (*got != piece.data.size()) {
      return absl::DataLossError(absl::StrCat(path_, ": short read"));
    }
  }
  return batch;
}

}  // namespace sluice::batch_queue
