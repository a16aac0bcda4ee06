#include "stages/lc0/format/packed_expander.h"

namespace sluice::lc0 {

PackedExpander::PackedExpander(TensorExpander expander)
    : expander_(expander),
      scratch_(std::make_unique_for_overwrite<V6TrainingRecord>()) {
  for (int i = 0; i < kPolicySize; ++i) scratch_->probabilities[i] = -1.0f;
}

void PackedExpander::Expand(const PackedRecord& record, TensorBatch* batch,
                            size_t slot) {
  record.UnpackAllButPolicy(scratch_.get());
  record.ScatterPolicy(scratch_.get());
  expander_.Expand(*scratch_, batch, slot);
  record.RestoreMarkers(scratch_.get());
}

}  // namespace sluice::lc0
