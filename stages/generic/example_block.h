// ExampleBlock: a run of consecutive examples stored column by column: per
// field one contiguous buffer holding `rows` values of the same dtype and
// per-example shape. A columnar source (arrow_source with output
// ROW_BLOCKS) hands these on instead of one Example per row, so a batcher
// after it copies whole runs of rows at once, or wraps a run without a copy
// when a batch lies inside it.
//
//   const BlockColumn* x = block.Find("embedding");
//   // x->data: block.rows() * x->example_bytes bytes, row r at
//   // x->data + r * x->example_bytes
//   ExampleOrigin third = block.OriginOfRow(2);  // for checkpoints
#ifndef SLUICE_STAGES_GENERIC_EXAMPLE_BLOCK_H_
#define SLUICE_STAGES_GENERIC_EXAMPLE_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/dtype.h"
#include "stages/generic/example.h"

namespace sluice {

// One field of every example of a block.
struct BlockColumn {
  std::string name;
  DType dtype = DType::kUInt8;
  // Per example; empty for a scalar.
  std::vector<int64_t> example_shape;
  // Bytes of one example's value: the product of example_shape times the
  // dtype's size.
  size_t example_bytes = 0;
  // rows * example_bytes bytes, example by example, row-major.
  const std::byte* data = nullptr;
};

class ExampleBlock {
 public:
  ExampleBlock() = default;
  // `rows` examples whose column memory `keep_alive` owns.
  ExampleBlock(int64_t rows, std::vector<BlockColumn> columns,
               std::shared_ptr<const void> keep_alive)
      : rows_(rows),
        columns_(std::move(columns)),
        keep_alive_(std::move(keep_alive)) {}

  int64_t rows() const { return rows_; }
  const std::vector<BlockColumn>& columns() const { return columns_; }
  // The column called `name`, or nullptr.
  const BlockColumn* Find(std::string_view name) const {
    for (const BlockColumn& column : columns_) {
      if (column.name == name) return &column;
    }
    return nullptr;
  }
  // Owns the memory of every column; share it to keep a view alive.
  const std::shared_ptr<const void>& keep_alive() const { return keep_alive_; }

  // Checkpoints (engine/checkpoint.h): a block's rows are consecutive items
  // of one unit and one group of its source's stream, so the origin of its
  // first row names them all: row r has ref.index and cursor.ordinal
  // greater by r. Sources that cannot be checkpointed leave it zero.
  const ExampleOrigin& origin() const { return origin_; }
  void set_origin(const ExampleOrigin& origin) { origin_ = origin; }
  // The origin of row `row` (0 <= row < rows()).
  ExampleOrigin OriginOfRow(int64_t row) const {
    ExampleOrigin origin = origin_;
    origin.ref.index += static_cast<uint32_t>(row);
    origin.cursor.ordinal += static_cast<uint32_t>(row);
    return origin;
  }

 private:
  int64_t rows_ = 0;
  std::vector<BlockColumn> columns_;
  std::shared_ptr<const void> keep_alive_;
  ExampleOrigin origin_;
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_EXAMPLE_BLOCK_H_
