#include "stages/generic/internal/arrow_batch_reads.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "asio/co_spawn.hpp"
#include "asio/post.hpp"
#include "asio/this_coro.hpp"
#include "asio/use_awaitable.hpp"

namespace sluice {

namespace arrow = io::arrow;
using arrow::RecordBatch;

namespace {

void ReturnPermit(const ArrowBatchSink& sink) {
  bool permit = true;
  sink.permits->TrySend(permit);
}

// ReadColumnRows into a buffer of `pool`, begun from the executor's queue
// (co_spawn would begin it on the spawning thread) so that another worker
// thread may run it; sets `*home` to the buffer's home before it reads.
asio::awaitable<absl::StatusOr<RecordBatch>> ReadColumnRowsElsewhere(
    const arrow::ArrowFileReader& reader,
    const arrow::ArrowFileReader::ColumnLayout& layout, int64_t first_row,
    int64_t rows, ArrowBufferPool& pool, unsigned* home) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  co_await asio::post(executor, asio::use_awaitable);
  *home = ArrowBufferPool::CurrentHome();
  co_return co_await reader.ReadColumnRows(layout, first_row, rows,
                                           pool.Take(*home));
}

}  // namespace

asio::awaitable<bool> ReadRecordBatches(const arrow::ArrowFileReader& reader,
                                        const ArrowBatchSink& sink) {
  int64_t row = 0;
  for (int i = 0; i < reader.num_record_batches(); ++i) {
    if (sink.end_row >= 0 && row >= sink.end_row) break;
    if (!co_await sink.permits->Receive(sink.meter)) co_return false;
    const unsigned home = ArrowBufferPool::CurrentHome();
    absl::StatusOr<RecordBatch> batch =
        co_await reader.ReadRecordBatch(i, sink.pool->Take(home));
    if (!batch.ok()) {
      ReturnPermit(sink);
      sink.fail(batch.status());
      co_return true;
    }
    const int64_t rows = batch->num_rows();
    if (!co_await sink.deliver(*std::move(batch), home, row, 1)) {
      co_return false;
    }
    row += rows;
  }
  co_return true;
}

asio::awaitable<bool> ReadStreamBatches(arrow::ArrowStreamReader& reader,
                                        const ArrowBatchSink& sink) {
  int64_t row = 0;
  while (sink.end_row < 0 || row < sink.end_row) {
    if (!co_await sink.permits->Receive(sink.meter)) co_return false;
    const unsigned home = ArrowBufferPool::CurrentHome();
    absl::StatusOr<std::optional<RecordBatch>> batch =
        co_await reader.Next(sink.pool->Take(home));
    if (!batch.ok() || !batch->has_value()) {
      ReturnPermit(sink);
      if (!batch.ok()) sink.fail(batch.status());
      co_return true;
    }
    const int64_t rows = (*batch)->num_rows();
    if (!co_await sink.deliver(std::move(**batch), home, row, 1)) {
      co_return false;
    }
    row += rows;
  }
  co_return true;
}

asio::awaitable<bool> ReadRowBlocks(
    const arrow::ArrowFileReader& reader,
    const arrow::ArrowFileReader::ColumnLayout& layout, RowBlockReads plan,
    const ArrowBatchSink& sink) {
  // A read of a run of rows stops at its end.
  const int64_t rows = sink.end_row >= 0
                           ? std::min(layout.first_rows.back(), sink.end_row)
                           : layout.first_rows.back();
  const int64_t block = plan.block_rows;
  const int64_t from_row = std::min(plan.from_row, rows);
  // Record batches whose last row was read (or skipped by a resume).
  size_t batches_done = 0;
  while (batches_done + 1 < layout.first_rows.size() &&
         layout.first_rows[batches_done + 1] <= from_row) {
    ++batches_done;
  }
  // Up to plan.reads_at_once blocks are read at once, each by a
  // coroutine of its own that any worker thread may run, and delivered in
  // row order: on a warm page cache every core copies. Reads go into slot
  // (block number % reads at once); `finished` carries a slot when its read
  // is done.
  struct BlockRead {
    int64_t row = 0;
    int64_t take = 0;
    absl::StatusOr<RecordBatch> batch = absl::UnknownError("not read");
    bool done = false;  // the reading coroutine's view of `batch`
    unsigned home = 0;  // the buffer's (ArrowBufferPool)
  };
  const size_t at_once = plan.reads_at_once;
  std::vector<BlockRead> slots(at_once);
  Channel<size_t> finished("block reads", at_once);
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  int64_t next_row = from_row;
  int64_t phase = plan.phase;
  uint64_t started = 0;
  uint64_t delivered = 0;
  bool reading = true;   // neither stopping nor past a failed read
  bool stopped = false;  // the stage is stopping
  while (true) {
    while (reading && next_row < rows && started - delivered < at_once) {
      if (!co_await sink.permits->Receive(sink.meter)) {
        reading = false;
        stopped = true;
        break;
      }
      const size_t index = started++ % at_once;
      BlockRead& slot = slots[index];
      slot.row = next_row;
      slot.take = std::min(block - phase, rows - next_row);
      slot.done = false;
      phase = (phase + slot.take) % block;
      next_row += slot.take;
      if (at_once == 1) {
        // One at a time: read here, without a hop through the executor.
        slot.home = ArrowBufferPool::CurrentHome();
        slot.batch = co_await reader.ReadColumnRows(layout, slot.row, slot.take,
                                                    sink.pool->Take(slot.home));
        slot.done = true;
        continue;
      }
      asio::co_spawn(
          executor,
          ReadColumnRowsElsewhere(reader, layout, slot.row, slot.take,
                                  *sink.pool, &slot.home),
          [&slots, &finished, index](std::exception_ptr error,
                                     absl::StatusOr<RecordBatch> batch) {
            slots[index].batch =
                error ? absl::InternalError("read failed") : std::move(batch);
            size_t done = index;
            finished.TrySend(done);
          });
    }
    if (delivered == started) break;
    BlockRead& front = slots[delivered++ % at_once];
    while (!front.done) {
      const std::optional<size_t> done = co_await finished.Receive();
      slots[*done].done = true;
    }
    if (!reading || !front.batch.ok()) {
      // Stopping, or after a failed read: the rest of the file is not
      // delivered; each read's buffer and permit go back.
      if (reading) {
        sink.fail(front.batch.status());
        reading = false;
      }
      if (front.batch.ok()) {
        sink.pool->Give(std::move(*front.batch).TakeBuffer(), front.home);
      }
      ReturnPermit(sink);
      continue;
    }
    int finished_batches = 0;
    while (batches_done + 1 < layout.first_rows.size() &&
           layout.first_rows[batches_done + 1] <= front.row + front.take) {
      ++batches_done;
      ++finished_batches;
    }
    if (!co_await sink.deliver(*std::move(front.batch), front.home, front.row,
                               finished_batches)) {
      reading = false;
      stopped = true;
    }
  }
  co_return !stopped;
}

}  // namespace sluice
