#include "engine/stage_context.h"

#include <utility>

namespace sluice {

StageContext::StageContext(const StageConfig& config, std::string type,
                           int type_number, PipelineSettings settings,
                           std::vector<StageInput> inputs,
                           std::vector<std::string> consumer_types)
    : config_(config),
      type_(std::move(type)),
      type_number_(type_number),
      settings_(settings),
      inputs_(std::move(inputs)),
      consumer_types_(std::move(consumer_types)) {}

absl::Status StageContext::FieldError(std::string_view field,
                                      std::string_view problem) const {
  return absl::InvalidArgumentError(
      absl::StrCat("stage '", name(), "' (", type_, "): field '", type_, ".",
                   std::string(field), "' ", std::string(problem)));
}

absl::Status StageContext::RequireNoInputs() const {
  if (inputs_.empty()) return absl::OkStatus();
  return InputError(
      absl::StrCat("is a source and takes no input, but has ", inputs_.size()));
}

absl::Status StageContext::InputError(std::string_view problem) const {
  return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "' (",
                                                 type_, "): field 'input' ",
                                                 std::string(problem)));
}

}  // namespace sluice
