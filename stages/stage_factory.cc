#include "stages/stage_factory.h"

#include "absl/strings/str_cat.h"
#include "stages/generic/counting_source.h"
#include "stages/generic/pass_through.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<Stage>> CreateStage(
    const StageContext& context) {
  switch (context.type_number()) {
    case StageConfig::kCountingSourceFieldNumber:
      return CountingSource::Create(context);
    case StageConfig::kPassThroughFieldNumber:
      return PassThrough::Create(context);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("stage '", context.name(), "': stage type '",
                   context.type(), "' has no implementation"));
}

}  // namespace sluice
