// CreateStage: the one place that maps a StageConfig's stage-specific field
// to the stage class that implements it (an exhaustive switch; add a case
// for every new stage, see docs/new_stage.md).
//
//   DataLoader loader(CreateStage);
#ifndef SLUICE_STAGES_STAGE_FACTORY_H_
#define SLUICE_STAGES_STAGE_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "engine/stage_context.h"

namespace sluice {

// Builds the stage that context.config() describes, or an InvalidArgument
// error naming the stage and the field.
absl::StatusOr<std::unique_ptr<Stage>> CreateStage(const StageContext& context);

}  // namespace sluice

#endif  // SLUICE_STAGES_STAGE_FACTORY_H_
