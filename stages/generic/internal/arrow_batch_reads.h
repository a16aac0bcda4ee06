// arrow_source's reads of one file: its record batches one at a time (file
// or stream format), or, for fixed-size-row columns of a file-format file,
// its rows in blocks of the output stream's block_rows, several blocks at
// once. Every read holds a permit of the sink while its batch is in flight,
// so at most `readahead` batches are read, queued or emitted.
//
//   ArrowBatchSink sink{.pool = pool, .permits = &permits, .meter = meter,
//                       .deliver = ..., .fail = ...};
//   if (!co_await ReadRecordBatches(reader, sink)) co_return;  // stopping
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_BATCH_READS_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_BATCH_READS_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "asio/awaitable.hpp"
#include "engine/channel.h"
#include "engine/load_meter.h"
#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/arrow_stream_reader.h"
#include "io/arrow/record_batch.h"
#include "stages/generic/internal/arrow_buffer_pool.h"

namespace sluice {

// Where a file's reads take their buffers and permits from and hand their
// record batches to.
struct ArrowBatchSink {
  // The buffers reads land in.
  ArrowBufferPool* pool = nullptr;
  // A read takes a permit before it begins; the permit goes back when its
  // batch is delivered (deliver's business) or its read fails (the
  // reader's).
  Channel<bool>* permits = nullptr;
  LoadMeter* meter = nullptr;
  // Hands on `batch`, the file's rows from `first_row`, whose buffer goes
  // back to the pool at `home` (ArrowBufferPool::CurrentHome of the thread
  // that read it) and which completes `record_batches` of the file's
  // record batches. False once the stage is stopping.
  std::function<asio::awaitable<bool>(io::arrow::RecordBatch batch,
                                      unsigned home, int64_t first_row,
                                      int record_batches)>
      deliver;
  // A read failed: called once, and the rest of the file is not read.
  std::function<void(const absl::Status& error)> fail;
  // When at least 0: the file's rows from this one on are not wanted, so
  // record batches that begin there are not read (ReadRecordBatches,
  // ReadStreamBatches) and row blocks end there (ReadRowBlocks).
  int64_t end_row = -1;
};

// Reads the record batches of a file-format file in order. False once the
// stage is stopping (a permit or a delivery refused); true at the file's
// end or after a failed read.
asio::awaitable<bool> ReadRecordBatches(
    const io::arrow::ArrowFileReader& reader, const ArrowBatchSink& sink);

// Reads the record batches of a stream-format file in order; returns as
// ReadRecordBatches.
asio::awaitable<bool> ReadStreamBatches(io::arrow::ArrowStreamReader& reader,
                                        const ArrowBatchSink& sink);

// How ReadRowBlocks cuts a file into blocks.
struct RowBlockReads {
  // The file's first row to read (a resume's first file; else 0).
  int64_t from_row = 0;
  // Blocks end on multiples of block_rows of the output stream, which
  // stands at `phase` (rows delivered modulo block_rows) when this file
  // begins.
  int64_t block_rows = 1;
  int64_t phase = 0;
  // Blocks read at once (at least 1): each read by a coroutine of its own
  // that any worker thread may run, delivered in row order.
  size_t reads_at_once = 1;
};

// Reads the rows of a file-format file from plan.from_row in blocks,
// through `layout` (ArrowFileReader::LocateColumns): one read per record
// batch and column of a block into one buffer, nothing of other columns.
// A failed block read skips the rest of the file after the blocks before
// it. Returns as ReadRecordBatches.
asio::awaitable<bool> ReadRowBlocks(
    const io::arrow::ArrowFileReader& reader,
    const io::arrow::ArrowFileReader::ColumnLayout& layout, RowBlockReads plan,
    const ArrowBatchSink& sink);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_BATCH_READS_H_
