// TypedBatch <-> batch files (io/batch_file_meta.h), for batches of any
// workload: the schema of a batch (each tensor's name, dtype and shape per
// example), writing a group of batches as one file, and reading one batch
// of a file straight into a TypedBatch (one copy, from the page cache).
//
//   std::vector<FieldSpec> schema = BatchSchemaOf(batch);
//   SLUICE_ASSIGN_OR_RETURN(std::string name,
//       WriteBatchFile(dir, "train", seq, now_ms, batches, &bytes));
//   SLUICE_ASSIGN_OR_RETURN(BatchFile file, BatchFile::Open(path, schema));
//   SLUICE_ASSIGN_OR_RETURN(TypedBatch batch, file.ReadBatch(0));
#ifndef SLUICE_STAGES_BATCH_QUEUE_INTERNAL_BATCH_FILE_H_
#define SLUICE_STAGES_BATCH_QUEUE_INTERNAL_BATCH_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/batch_buffer_pool.h"
#include "engine/dtype.h"
#include "engine/typed_batch.h"
#include "io/batch_file_meta.h"

namespace sluice::batch_queue {

// The safetensors name of `dtype`: F32, F64, F16, I64, I32, I16, I8, U8 or
// BOOL.
std::string_view SafetensorsDtypeOf(DType dtype);
// The dtype of a safetensors dtype name, or nullopt for one sluice does not
// carry (U16, BF16, ...).
std::optional<DType> DTypeOfSafetensors(std::string_view name);

// The schema of `batch`: one field per tensor in order, its shape without
// the batch axis; the first tensor has role "input", the others "target"
// (lc0: planes in, probs / winner / best_q / plies_left out).
std::vector<FieldSpec> BatchSchemaOf(const TypedBatch& batch);

// The tensors a batch of `schema` is allocated with (TypedBatch::Allocate);
// InvalidArgument naming the field for a dtype sluice does not carry.
absl::StatusOr<std::vector<BatchTensorSpec>> TensorSpecsOf(
    const std::vector<FieldSpec>& schema);

// Writes `batches` (at least one, all of the same size and schema) as one
// file of queue directory `dir` named for `now_ms`, `sequence` and their
// count, atomically. Returns the file name and adds the bytes written to
// `bytes`. InvalidArgument when the batches' schemas differ.
absl::StatusOr<std::string> WriteBatchFile(const std::string& dir,
                                           const std::string& split,
                                           int64_t sequence, int64_t now_ms,
                                           std::span<const TypedBatch> batches,
                                           uint64_t* bytes);

// An open, validated batch file.
class BatchFile {
 public:
  // Opens and validates `path`: NotFound when it is gone, DataLoss when it
  // is not a valid batch file, InvalidArgument when its schema is not
  // `schema` (the message names the field), another error on I/O.
  static absl::StatusOr<BatchFile> Open(const std::string& path,
                                        const std::vector<FieldSpec>& schema);

  BatchFile(BatchFile&& other) noexcept;
  BatchFile& operator=(BatchFile&&) = delete;
  ~BatchFile();

  const BatchFileInfo& info() const { return layout_.info; }
  uint64_t file_size() const { return file_size_; }
  const std::string& path() const { return path_; }
  // The open file, for reads through io::AsyncFileReader.
  int fd() const { return fd_; }

  // One contiguous read that fills part of a batch: data.size() bytes of
  // the file at `offset`.
  struct Piece {
    uint64_t offset = 0;
    std::span<std::byte> data;
  };
  // The reads that fill `batch` (allocated with TensorSpecsOf(schema) for
  // info().batch_size examples) with batch `index` (< info().num_batches),
  // one per tensor; DataLoss when the file's field sizes do not match.
  absl::StatusOr<std::vector<Piece>> Pieces(int64_t index,
                                            const TypedBatch& batch) const;

  // Batch `index` (< info().num_batches) read with blocking preads, its
  // buffer from `pool` when given (a pool of batches of this file's schema
  // and batch size); DataLoss on a short read.
  absl::StatusOr<TypedBatch> ReadBatch(
      int64_t index, std::shared_ptr<BatchBufferPool> pool = nullptr) const;

 private:
  BatchFile(int fd, std::string path, uint64_t file_size,
            BatchFileLayout layout, std::vector<BatchTensorSpec> specs);

  int fd_ = -1;
  std::string path_;
  uint64_t file_size_ = 0;
  BatchFileLayout layout_;
  std::vector<BatchTensorSpec> specs_;
};

}  // namespace sluice::batch_queue

#endif  // SLUICE_STAGES_BATCH_QUEUE_INTERNAL_BATCH_FILE_H_
