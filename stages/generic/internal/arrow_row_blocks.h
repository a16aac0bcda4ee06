// Cuts a record batch into ExampleBlocks for arrow_source's ROW_BLOCKS
// output: maximal runs of consecutive good rows whose variable-size values
// (binary, list) have the same length, so each column of a run is one
// contiguous, fixed-shape buffer.
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_ROW_BLOCKS_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_ROW_BLOCKS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "io/arrow/record_batch.h"
#include "stages/generic/example_block.h"
#include "stages/generic/internal/arrow_column_plan.h"

namespace sluice {

struct RowBlockOptions {
  // The `index` of row 0 of the batch.
  int64_t first_index = 0;
  // TRAIN: each row's `seed` is pass_seed + index; EVAL: 0.
  bool train = false;
  uint64_t pass_seed = 0;
  // Largest binary or list value in bytes; 0: no limit.
  uint64_t max_value_bytes = 0;
  // The origin of row 0 of the batch (checkpoints): a block of rows from
  // `begin` gets it with ref.index and cursor.ordinal greater by begin.
  ExampleOrigin origin;
};

// Appends to `out` the blocks of rows [begin, end) of `*batch` (end <=
// num_rows): one column per plan in order, then "index" and "seed" (int64
// scalars). Values of the batch's memory are views sharing `batch`;
// converted values (bool, uint16/uint32 widened to int64, index, seed) live
// in one buffer per block. Rows the per-row output would skip are skipped
// here too, each reported to `skip`, and they end a block. Each block
// carries the origin of its first row (ExampleBlock::origin).
void AppendRowBlocks(std::shared_ptr<const io::arrow::RecordBatch> batch,
                     int64_t begin, int64_t end,
                     std::span<const ArrowColumnPlan> plans,
                     const RowBlockOptions& options,
                     const RowSkipFunction& skip,
                     std::vector<ExampleBlock>& out);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_ROW_BLOCKS_H_
