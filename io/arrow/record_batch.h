// RecordBatch: `num_rows` rows of every column of a schema, as ArrayViews
// into the batch's body bytes.
//
//   absl::StatusOr<RecordBatch> batch =
//       co_await reader->ReadRecordBatch(i, std::move(buffer));
//   ... use batch->column(0) ...
//   buffer = std::move(*batch).TakeBuffer();   // recycle for the next read
//
// A batch read from a file owns the bytes its views point into (moving the
// batch keeps them valid); one decoded from caller bytes (ReadIpcBytes) owns
// none and is valid while those bytes are.
#ifndef SLUICE_IO_ARROW_RECORD_BATCH_H_
#define SLUICE_IO_ARROW_RECORD_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "io/arrow/array_view.h"

namespace sluice::io::arrow {

class RecordBatch {
 public:
  RecordBatch() = default;
  RecordBatch(int64_t num_rows, std::vector<ArrayView> columns,
              std::vector<std::byte> storage = {})
      : num_rows_(num_rows),
        columns_(std::move(columns)),
        storage_(std::move(storage)) {}

  // Rows of the batch; every column has this length.
  int64_t num_rows() const { return num_rows_; }
  // One view per schema field, in schema order.
  const std::vector<ArrayView>& columns() const { return columns_; }
  const ArrayView& column(size_t i) const { return columns_[i]; }

  // Gives back the buffer the batch was read into (empty for a batch over
  // caller bytes), for the next read to reuse its capacity. The views are
  // invalid afterwards.
  std::vector<std::byte> TakeBuffer() && {
    columns_.clear();
    num_rows_ = 0;
    return std::move(storage_);
  }

 private:
  int64_t num_rows_ = 0;
  std::vector<ArrayView> columns_;
  std::vector<std::byte> storage_;
};

}  // namespace sluice::io::arrow

#endif  // SLUICE_IO_ARROW_RECORD_BATCH_H_
