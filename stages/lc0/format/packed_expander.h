// PackedExpander: expands packed records (packed_record.h) into a
// TensorBatch without unpacking each one into a whole V6 record first.
//
//   PackedExpander expander(*TensorExpander::Create(1));
//   expander.Expand(frame.record, &batch, slot);
//
// Unpacking a record writes its 1,858 policy entries (almost all of them the
// illegal-move marker) before expansion reads them again. Instead, this
// keeps one record whose policy is all markers between calls: each record's
// fixed fields and its few dozen policy entries are written into it, it is
// expanded, and those entries are set back to the marker.
//
// Promises: the tensors are bit for bit those of Unpack, then
// TensorExpander::Expand. Not thread-safe: one per coroutine (it holds
// scratch space).
#ifndef SLUICE_STAGES_LC0_FORMAT_PACKED_EXPANDER_H_
#define SLUICE_STAGES_LC0_FORMAT_PACKED_EXPANDER_H_

#include <cstddef>
#include <memory>

#include "stages/lc0/format/packed_record.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/tensor_expansion.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {

class PackedExpander {
 public:
  explicit PackedExpander(TensorExpander expander);

  // Writes the five tensors of `record` (not empty) into `slot` of `batch`,
  // as TensorExpander::Expand does for the unpacked record.
  void Expand(const PackedRecord& record, TensorBatch* batch, size_t slot);

 private:
  TensorExpander expander_;
  // Its policy holds only markers between calls.
  std::unique_ptr<V6TrainingRecord> scratch_;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_PACKED_EXPANDER_H_
