// Config checks shared by the batch-queue stages.
#ifndef SLUICE_STAGES_BATCH_QUEUE_INTERNAL_QUEUE_CONFIG_CHECK_H_
#define SLUICE_STAGES_BATCH_QUEUE_INTERNAL_QUEUE_CONFIG_CHECK_H_

#include <string>

#include "absl/status/status.h"
#include "engine/stage_context.h"

namespace sluice::batch_queue {

// OK when `root` is non-empty and `split` is [A-Za-z0-9_]+ (a safe
// directory name); else the context's FieldError naming the field.
inline absl::Status CheckRootAndSplit(const StageContext& context,
                                      const std::string& root,
                                      const std::string& split) {
  if (root.empty()) return context.FieldError("root", "is required");
  if (split.empty() ||
      split.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
          std::string::npos) {
    return context.FieldError("split", "must be [A-Za-z0-9_]+");
  }
  return absl::OkStatus();
}

}  // namespace sluice::batch_queue

#endif  // SLUICE_STAGES_BATCH_QUEUE_INTERNAL_QUEUE_CONFIG_CHECK_H_
