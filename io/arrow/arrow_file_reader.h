// ArrowFileReader: random access to the record batches of an Arrow IPC
// *file* (ARROW1 magic, footer), read through io::AsyncFileReader.
//
//   absl::StatusOr<std::unique_ptr<ArrowFileReader>> reader =
//       co_await ArrowFileReader::Open(file_reader, "train.arrow");
//   std::vector<std::byte> buffer;
//   for (int i = 0; i < (*reader)->num_record_batches(); ++i) {
//     absl::StatusOr<RecordBatch> batch =
//         co_await (*reader)->ReadRecordBatch(i, std::move(buffer));
//     ... use *batch ...
//     buffer = std::move(*batch).TakeBuffer();
//   }
//
// Promises:
// - Open reads the file's first 8 bytes, its tail and its footer, nothing
//   else; the schema and the batch count are known afterwards.
// - RecordBatchRows reads the batches' metadata 64 at a time, together.
// - ReadRecordBatch does one read of exactly that batch's metadata and body
//   into the buffer it is given (reusing its capacity), so memory is bounded
//   by the batches in flight; the body is bounded by
//   IpcLimits::max_body_bytes before anything is allocated.
// - LocateColumns reads the metadata as RecordBatchRows does; then
//   ReadColumnRows reads only the asked rows' values of those columns, one
//   read per record batch and column, together, into one buffer.
// - Every awaitable resumes on the executor of the awaiting coroutine and
//   returns a status on failure (I/O, damage, unsupported feature), never
//   throws. Cancellation: as AsyncFileReader::ReadFullyAt (the read in
//   flight completes; nothing is left half-initialised).
// - Several ReadRecordBatch calls may be in flight at once, from any
//   executor thread: the reader's state is immutable after Open.
// - The reader (and the AsyncFileReader) must outlive every read.
#ifndef SLUICE_IO_ARROW_ARROW_FILE_READER_H_
#define SLUICE_IO_ARROW_ARROW_FILE_READER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "asio/awaitable.hpp"
#include "io/arrow/file_version.h"
#include "io/arrow/internal/file_footer.h"
#include "io/arrow/internal/read_only_file.h"
#include "io/arrow/ipc_limits.h"
#include "io/arrow/record_batch.h"
#include "io/arrow/schema.h"
#include "io/async_file_reader.h"

namespace org::apache::arrow::flatbuf {
struct RecordBatch;
}  // namespace org::apache::arrow::flatbuf

namespace sluice::io::arrow {
namespace internal {
namespace fb = ::org::apache::arrow::flatbuf;
}  // namespace internal

// Bytes of a file's start that IsArrowFileStart needs.
inline constexpr size_t kArrowFileMagicBytes = 6;

// Whether `head` (a file's first bytes) starts with the IPC file format's
// magic "ARROW1"; a stream-format file does not.
bool IsArrowFileStart(std::span<const std::byte> head);

class ArrowFileReader {
 public:
  // Opens `path` and reads its footer and schema. With `direct_io`, the
  // file's reads bypass the page cache (O_DIRECT) where its file system
  // allows it; direct_io_refusal() says why not.
  static asio::awaitable<absl::StatusOr<std::unique_ptr<ArrowFileReader>>> Open(
      AsyncFileReader& reader, std::string path, IpcLimits limits = {},
      bool direct_io = false);

  const std::string& path() const { return file_.path(); }
  const std::string& direct_io_refusal() const {
    return file_.direct_io_refusal();
  }
  // The file as it was when opened: a ColumnLayout found on an open of the
  // same version holds for this one.
  const FileVersion& version() const { return file_.version(); }
  const Schema& schema() const { return footer_.schema; }
  int num_record_batches() const {
    return static_cast<int>(footer_.record_batches.size());
  }

  // Bytes of record batch `index`'s body, as the footer says.
  int64_t RecordBatchBodyBytes(int index) const {
    return footer_.record_batches[index].body_bytes;
  }

  // The rows of every record batch, in order, from each batch's metadata
  // alone (one small read per batch, no body): what a reader needs to index
  // rows before reading them.
  asio::awaitable<absl::StatusOr<std::vector<int64_t>>> RecordBatchRows() const;

  // Reads record batch `index` (in [0, num_record_batches())) into
  // `buffer`, which the returned batch owns (TakeBuffer gives it back).
  asio::awaitable<absl::StatusOr<RecordBatch>> ReadRecordBatch(
      int index, std::vector<std::byte> buffer = {}) const;

  // Where the values of some fixed-size-row columns lie in the file,
  // record batch by record batch (LocateColumns), for ReadColumnRows.
  struct ColumnLayout {
    std::vector<int> columns;       // top-level indexes
    std::vector<size_t> row_bytes;  // per column
    // Each record batch's first row, then the file's row count.
    std::vector<int64_t> first_rows;
    // File offset of each batch's values of each column, batch-major.
    std::vector<int64_t> value_offsets;
  };

  // Reads every record batch's metadata (64 at a time, like
  // RecordBatchRows) and locates the values of `columns` (top-level
  // indexes, each with FixedRowBytes > 0) in each; nullopt when one of
  // those columns has a null in some batch (read the file batch by batch).
  asio::awaitable<absl::StatusOr<std::optional<ColumnLayout>>> LocateColumns(
      std::span<const int> columns) const;

  // Reads the file's rows [first_row, first_row + rows) of the layout's
  // columns, whatever record batches they lie in: each column's values go
  // straight from the file into one contiguous run of `buffer` (the
  // returned batch owns it), so consumers view rows across record batch
  // boundaries without copying. The batch's other columns are empty
  // (length 0). Nothing else of the file is read.
  asio::awaitable<absl::StatusOr<RecordBatch>> ReadColumnRows(
      const ColumnLayout& layout, int64_t first_row, int64_t rows,
      std::vector<std::byte> buffer = {}) const;

 private:
  ArrowFileReader(AsyncFileReader& reader, internal::ReadOnlyFile file,
                  IpcLimits limits, internal::FileFooter footer);
  // Reads every record batch's metadata, 64 batches at a time, all in
  // flight together, and calls `visit(index, header)` for each in order
  // with its verified RecordBatch header (refused as the stream reader's
  // SkipNext refuses: internal::RecordBatchHeader) and the body bytes its
  // message announces (at most the block's). Stops at the first error.
  using HeaderVisitor = std::function<absl::Status(
      size_t index, const internal::fb::RecordBatch& header,
      int64_t body_bytes)>;
  asio::awaitable<absl::Status> ForEachRecordBatchHeader(
      const HeaderVisitor& visit) const;

  AsyncFileReader& reader_;
  internal::ReadOnlyFile file_;
  IpcLimits limits_;
  internal::FileFooter footer_;
};

}  // namespace sluice::io::arrow

#endif  // SLUICE_IO_ARROW_ARROW_FILE_READER_H_
