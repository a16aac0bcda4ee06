// arrow_source's EXAMPLES output: one Example per row of a record batch,
// each mapped column a field (binary and list values views sharing the
// record batch, scalars inline), then `index` and `seed`, tagged with the
// row's origin for checkpoints.
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_ROW_EXAMPLES_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_ROW_EXAMPLES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "io/arrow/record_batch.h"
#include "stages/generic/example.h"
#include "stages/generic/internal/arrow_column_plan.h"
#include "stages/generic/internal/arrow_dataset.h"

namespace sluice {

struct RowExampleOptions {
  // TRAIN: each row's `seed` is the batch's pass_seed + index; EVAL: 0.
  bool train = false;
  // Largest binary or list value in bytes; 0: no limit.
  uint64_t max_value_bytes = 0;
};

// The example of batch row `r` of `loaded` (`chains`: each planned
// column's arrays down to its value, ColumnChain), or nullopt when the row
// is skipped (null_value, value_too_large), reported to `skip` with the
// row within the batch. Its views keep `keep_alive` alive: the record
// batch, or a hold on it shared by the rows handed over together
// (HoldForRows).
std::optional<Example> MakeRowExample(
    const ArrowLoadedBatch& loaded,
    const std::vector<std::vector<const io::arrow::ArrayView*>>& chains,
    int64_t r, const RowExampleOptions& options, const RowSkipFunction& skip,
    const std::shared_ptr<const void>& keep_alive);

// A hold on `loaded`'s record batch for the examples of a few rows: they
// count their references on it, not on the batch, so that a consumer on
// another thread dropping earlier rows of the batch does not contend with
// the source making later ones (one shared counter per group of rows
// instead of one per batch). The batch lives while any hold does.
std::shared_ptr<const void> HoldForRows(const ArrowLoadedBatch& loaded);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_ROW_EXAMPLES_H_
