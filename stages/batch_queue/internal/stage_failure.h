// How the batch-queue stages fail from inside their coroutines.
#ifndef SLUICE_STAGES_BATCH_QUEUE_INTERNAL_STAGE_FAILURE_H_
#define SLUICE_STAGES_BATCH_QUEUE_INTERNAL_STAGE_FAILURE_H_

#include <stdexcept>

#include "absl/status/status.h"

namespace sluice::batch_queue::internal {

// Throws a non-OK `status` as the stage's failure (the pipeline reports it
// under the stage's name); does nothing on OK.
inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw std::runtime_error(status.ToString());
}

}  // namespace sluice::batch_queue::internal

#endif  // SLUICE_STAGES_BATCH_QUEUE_INTERNAL_STAGE_FAILURE_H_
