// StageContext: what the factory hands a stage's Create(): its config, its
// resolved inputs and the pipeline-wide settings (seed, deterministic mode,
// rank), plus helpers that produce the
// engine's standard error messages (naming the stage and the field).
//
//   static absl::StatusOr<std::unique_ptr<Stage>> Create(
//       const StageContext& context) {
//     SLUICE_ASSIGN_OR_RETURN(Channel<Frame>* input,
//                             context.SingleInput<Frame>());
//     if (config.batch_size() == 0)
//       return context.FieldError("batch_size", "must be at least 1");
//     ...
//   }
#ifndef SLUICE_ENGINE_STAGE_CONTEXT_H_
#define SLUICE_ENGINE_STAGE_CONTEXT_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/channel.h"
#include "engine/element_type.h"
#include "proto/data_loader_config.pb.h"

namespace sluice {

// One resolved input: the reference as written ("pool.output") and the
// upstream channel.
struct StageInput {
  std::string reference;
  ChannelBase* channel;
};

// What every stage of a pipeline shares (DataLoaderConfig's fields).
struct PipelineSettings {
  uint64_t seed = 0;
  bool deterministic = false;
  bool resumable = false;
  uint32_t rank = 0;
  uint32_t world_size = 1;
  // DataLoaderConfig.autotune: the most workers the tuner may give a stage
  // (0: autotune off).
  uint32_t max_tuned_parallelism = 0;
};

class StageContext {
 public:
  // `type` is the name of the stage-specific config field that is set and
  // `type_number` its field number in StageConfig.
  // `consumer_types`: see consumer_types().
  StageContext(const StageConfig& config, std::string type, int type_number,
               PipelineSettings settings, std::vector<StageInput> inputs,
               std::vector<std::string> consumer_types = {});

  const std::string& name() const { return config_.name(); }
  const std::string& type() const { return type_; }
  // The StageConfig field number of the stage-specific config, for the
  // factory's switch (e.g. StageConfig::kPassThroughFieldNumber).
  int type_number() const { return type_number_; }
  const StageConfig& config() const { return config_; }
  // The pipeline seed; stages derive their per-item randomness from it.
  uint64_t seed() const { return settings_.seed; }
  // Deterministic mode: parallel workers hand results on in input order and
  // nothing may depend on timing (DataLoaderConfig.deterministic).
  bool deterministic() const { return settings_.deterministic; }
  // Parallel workers hand results on in input order: deterministic or
  // resumable (DataLoaderConfig.resumable; checkpoints need it).
  bool ordered() const {
    return settings_.deterministic || settings_.resumable;
  }
  // The workers a stage whose parallelism is a plain count spawns when
  // configured with `parallelism`: that many, or with autotune the most
  // the tuner may choose (at least `parallelism`); see
  // Stage::AddParallelismGate.
  uint32_t MaxParallelism(uint32_t parallelism) const {
    return std::max(parallelism, settings_.max_tuned_parallelism);
  }
  // This process's shard: rank() of world_size() (1: all data).
  uint32_t rank() const { return settings_.rank; }
  uint32_t world_size() const { return settings_.world_size; }
  const std::vector<StageInput>& inputs() const { return inputs_; }
  // The type (e.g. "batcher") of each stage of the DataLoaderConfig that
  // takes one of this stage's outputs, in config order, and "output" for
  // each of them the loader hands out itself. Empty for a stage added on
  // its own (Pipeline::AddStage). A stage may pick the form of its output
  // by it, never its meaning.
  const std::vector<std::string>& consumer_types() const {
    return consumer_types_;
  }

  // InvalidArgument "stage 'NAME' (TYPE): field 'TYPE.FIELD' PROBLEM".
  absl::Status FieldError(std::string_view field,
                          std::string_view problem) const;

  // An error unless the stage has no inputs.
  absl::Status RequireNoInputs() const;

  // Input `index` as a Channel<T>, or an error naming the stage, the input
  // and both element types.
  template <typename T>
  absl::StatusOr<Channel<T>*> Input(size_t index) const {
    if (index >= inputs_.size()) {
      return InputError(absl::StrCat("needs at least ", index + 1,
                                     " input(s) but has ", inputs_.size()));
    }
    const StageInput& input = inputs_[index];
    if (input.channel->element_type() != std::type_index(typeid(T))) {
      return InputError(
          absl::StrCat("'", input.reference, "': expects ",
                       std::string(ElementTypeName<T>()), " but it carries ",
                       std::string(input.channel->element_type_name())));
    }
    return static_cast<Channel<T>*>(input.channel);
  }

  // The one input as a Channel<T>; an error when there is not exactly one.
  template <typename T>
  absl::StatusOr<Channel<T>*> SingleInput() const {
    if (inputs_.size() != 1) {
      return InputError(
          absl::StrCat("needs exactly 1 input but has ", inputs_.size()));
    }
    return Input<T>(0);
  }

 private:
  absl::Status InputError(std::string_view problem) const;

  const StageConfig& config_;
  const std::string type_;
  const int type_number_;
  const PipelineSettings settings_;
  const std::vector<StageInput> inputs_;
  const std::vector<std::string> consumer_types_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_STAGE_CONTEXT_H_
