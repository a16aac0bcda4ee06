// lc0::TensorBatch <-> batch files (io/batch_file_meta.h): the schema of the
// five training tensors, writing a group of batches as one file, and
// reading one batch of a file straight into a TensorBatch (one copy, from
// the page cache).
//
//   SLUICE_ASSIGN_OR_RETURN(std::string name,
//       WriteLc0BatchFile(dir, "train", seq, now_ms, batches, &bytes));
//   SLUICE_ASSIGN_OR_RETURN(Lc0BatchFile file, Lc0BatchFile::Open(path));
//   SLUICE_ASSIGN_OR_RETURN(TensorBatch batch, file.ReadBatch(0));
#ifndef SLUICE_STAGES_BATCH_QUEUE_INTERNAL_LC0_BATCH_FILE_H_
#define SLUICE_STAGES_BATCH_QUEUE_INTERNAL_LC0_BATCH_FILE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/batch_buffer_pool.h"
#include "io/batch_file_meta.h"
#include "stages/lc0/format/tensor_batch.h"

namespace sluice::batch_queue {

// The fields of lc0::TensorBatch in TensorId order, F32: planes (role
// "input"), probs, winner, best_q, plies_left (role "target").
const std::vector<FieldSpec>& Lc0BatchSchema();

// Writes `batches` (at least one, all of the same size) as one file of
// queue directory `dir` named for `now_ms`, `sequence` and their count,
// atomically. Returns the file name and adds the bytes written to `bytes`.
absl::StatusOr<std::string> WriteLc0BatchFile(
    const std::string& dir, const std::string& split, int64_t sequence,
    int64_t now_ms, std::span<const lc0::TensorBatch> batches, uint64_t* bytes);

// An open, validated batch file.
class Lc0BatchFile {
 public:
  // Opens and validates `path`: NotFound when it is gone, DataLoss when it
  // is not a valid batch file, InvalidArgument when its schema is not
  // Lc0BatchSchema() (the message names the field), another error on I/O.
  static absl::StatusOr<Lc0BatchFile> Open(const std::string& path);

  Lc0BatchFile(Lc0BatchFile&& other) noexcept;
  Lc0BatchFile& operator=(Lc0BatchFile&&) = delete;
  ~Lc0BatchFile();

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
  // The reads that fill `batch` (of info().batch_size positions) with batch
  // `index` (< info().num_batches), one per tensor; DataLoss when the
  // file's field sizes do not match the batch.
  absl::StatusOr<std::array<Piece, lc0::kNumTensors>> Pieces(
      int64_t index, const lc0::TensorBatch& batch) const;

  // Batch `index` (< info().num_batches) read with blocking preads, its
  // buffer from `pool` when given (a pool of info().batch_size batches);
  // DataLoss on a short read.
  absl::StatusOr<lc0::TensorBatch> ReadBatch(
      int64_t index, std::shared_ptr<BatchBufferPool> pool = nullptr) const;

 private:
  Lc0BatchFile(int fd, std::string path, uint64_t file_size,
               BatchFileLayout layout);

  int fd_ = -1;
  std::string path_;
  uint64_t file_size_ = 0;
  BatchFileLayout layout_;
};

}  // namespace sluice::batch_queue

#endif  // SLUICE_STAGES_BATCH_QUEUE_INTERNAL_LC0_BATCH_FILE_H_
