#include "stages/batch_queue/internal/batch_file.h"

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

std::string_view SafetensorsDtypeOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "F32";
    case DType::kFloat64:
      return "F64";
    case DType::kFloat16:
      return "F16";
    case DType::kInt64:
      return "I64";
    case DType::kInt32:
      return "I32";
    case DType::kInt16:
      return "I16";
    case DType::kInt8:
      return "I8";
    case DType::kUInt8:
      return "U8";
    case DType::kBool:
      return "BOOL";
  }
  return "?";
}

std::optional<DType> DTypeOfSafetensors(std::string_view name) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                      DType::kInt64, DType::kInt32, DType::kInt16, DType::kInt8,
                      DType::kUInt8, DType::kBool}) {
    if (SafetensorsDtypeOf(dtype) == name) return dtype;
  }
  return std::nullopt;
}

std::vector<FieldSpec> BatchSchemaOf(const TypedBatch& batch) {
  std::vector<FieldSpec> schema;
  for (const BatchTensor& tensor : batch.tensors()) {
    schema.push_back({.name = tensor.name,
                      .dtype = std::string(SafetensorsDtypeOf(tensor.dtype)),
                      .shape = std::vector<int64_t>(tensor.shape.begin() + 1,
                                                    tensor.shape.end()),
                      .role = schema.empty() ? "input" : "target"});
  }
  return schema;
}

absl::StatusOr<std::vector<BatchTensorSpec>> TensorSpecsOf(
    const std::vector<FieldSpec>& schema) {
  std::vector<BatchTensorSpec> specs;
  for (const FieldSpec& field : schema) {
    const std::optional<DType> dtype = DTypeOfSafetensors(field.dtype);
    if (!dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("field '", field.name, "': dtype ", field.dtype,
                       " is not one sluice carries"));
    }
    specs.push_back({field.name, *dtype, field.shape});
  }
  return specs;
}

absl::StatusOr<std::string> WriteBatchFile(const std::string& dir,
                                           const std::string& split,
                                           int64_t sequence, int64_t now_ms,
                                           std::span<const TypedBatch> batches,
                                           uint64_t* bytes) {
  if (batches.empty()) {
    return absl::InvalidArgumentError("a batch file needs at least 1 batch");
  }
  BatchFileInfo info{.batch_size = static_cast<int64_t>(batches[0].size()),
                     .num_batches = static_cast<int64_t>(batches.size()),
                     .sequence = sequence,
                     .split = split,
                     .produced_at_ms = now_ms,
                     .schema = BatchSchemaOf(batches[0])};
  for (const TypedBatch& batch : batches) {
    if (batch.size() != batches[0].size()) {
      return absl::InvalidArgumentError(
          "the batches of one file must have the same size");
    }
    absl::Status same =
        CheckSameSchema(info.schema, BatchSchemaOf(batch), "batch file");
    if (!same.ok()) return same;
  }
  absl::StatusOr<std::string> header = EncodeBatchFileHeader(info);
  if (!header.ok()) return header.status();
  const std::string name = QueueFileName(now_ms, sequence, info.num_batches);
  absl::StatusOr<AtomicFileWriter> file = AtomicFileWriter::Create(dir, name);
  if (!file.ok()) return file.status();
  absl::Status status = file->Append(*header);
  uint64_t written = header->size();
  for (size_t t = 0; t < info.schema.size() && status.ok(); ++t) {
    for (const TypedBatch& batch : batches) {
      const BatchTensor& tensor = batch.tensor(t);
      status = file->Append(std::string_view(
          static_cast<const char*>(tensor.data), tensor.bytes));
      if (!status.ok()) break;
      written += tensor.bytes;
    }
  }
  if (status.ok()) status = file->Commit();
  if (!status.ok()) return status;
  *bytes += written;
  return name;
}

absl::StatusOr<BatchFile> BatchFile::Open(
    const std::string& path, const std::vector<FieldSpec>& schema) {
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
  absl::Status same = CheckSameSchema(schema, layout->info.schema, path);
  if (!same.ok()) return same;
  absl::StatusOr<std::vector<BatchTensorSpec>> specs = TensorSpecsOf(schema);
  if (!specs.ok()) return specs.status();
  closer.fd = -1;
  return BatchFile(fd, path, file_size, *std::move(layout), *std::move(specs));
}

BatchFile::BatchFile(int fd, std::string path, uint64_t file_size,
                     BatchFileLayout layout, std::vector<BatchTensorSpec> specs)
    : fd_(fd),
      path_(std::move(path)),
      file_size_(file_size),
      layout_(std::move(layout)),
      specs_(std::move(specs)) {}

BatchFile::BatchFile(BatchFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      file_size_(other.file_size_),
      layout_(std::move(other.layout_)),
      specs_(std::move(other.specs_)) {}

BatchFile::~BatchFile() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<std::vector<BatchFile::Piece>> BatchFile::Pieces(
    int64_t index, const TypedBatch& batch) const {
  if (batch.tensors().size() != layout_.fields.size()) {
    return absl::DataLossError(path_ + ": field count does not match");
  }
  std::vector<Piece> pieces;
  pieces.reserve(layout_.fields.size());
  for (size_t t = 0; t < layout_.fields.size(); ++t) {
    const BatchTensor& tensor = batch.tensor(t);
    const SafetensorsTensor& field = layout_.fields[t];
    if (field.bytes !=
        tensor.bytes * static_cast<uint64_t>(layout_.info.num_batches)) {
      return absl::DataLossError(path_ + ": field sizes do not match");
    }
    pieces.push_back({.offset = field.offset + tensor.bytes * index,
                      .data = std::span(static_cast<std::byte*>(tensor.data),
                                        tensor.bytes)});
  }
  return pieces;
}

absl::StatusOr<TypedBatch> BatchFile::ReadBatch(
    int64_t index, std::shared_ptr<BatchBufferPool> pool) const {
  absl::StatusOr<TypedBatch> batch = TypedBatch::Allocate(
      specs_, static_cast<size_t>(layout_.info.batch_size), std::move(pool));
  if (!batch.ok()) return batch.status();
  absl::StatusOr<std::vector<Piece>> pieces = Pieces(index, *batch);
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
