// Tensor expansion: one V6-layout record into one slot of a TensorBatch,
// bit for bit as the reference reader (chunkparser's convert_v6_to_tuple)
// does it; see FORMAT.md, "The training tuple".
//
//   SLUICE_ASSIGN_OR_RETURN(TensorExpander expander,
//   TensorExpander::Create(3)); for (size_t slot = 0; slot < batch.size();
//   ++slot) {
//     expander.Expand(records[slot], &batch, slot);
//   }
#ifndef SLUICE_STAGES_LC0_FORMAT_TENSOR_EXPANSION_H_
#define SLUICE_STAGES_LC0_FORMAT_TENSOR_EXPANSION_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {

// Expands records of one input format into tensors. Cheap to copy;
// thread-compatible (Expand is const and touches only its output slot).
class TensorExpander {
 public:
  // For a run expecting `input_format`: 1, 2, 3, 4, 5, 132 or 133.
  // InvalidArgument for any other value.
  static absl::StatusOr<TensorExpander> Create(uint32_t input_format);

  uint32_t input_format() const { return input_format_; }

  // Writes the five tensors of `record` into `slot` of `batch`. The record
  // must be in the V6 layout (up-converted) and have passed CheckRecord for
  // this input format; `slot` must be < batch->size(). The winner comes from
  // result_q/result_d when record.version is 6, else from the int8 result.
  void Expand(const V6TrainingRecord& record, TensorBatch* batch,
              size_t slot) const;

 private:
  explicit TensorExpander(uint32_t input_format)
      : input_format_(input_format) {}

  uint32_t input_format_;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_TENSOR_EXPANSION_H_
