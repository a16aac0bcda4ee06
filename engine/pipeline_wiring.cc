// Pipeline's wiring: building stages from their configs, resolving
// "stage.output" references to channels, the outputs GetNextFor hands out
// and the wiring by name the metrics exporter labels series with.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "engine/pipeline.h"
#include "engine/status_macros.h"
#include "google/protobuf/descriptor.h"

namespace sluice {
namespace {

using google::protobuf::FieldDescriptor;

// StageConfig fields numbered from here on are stage-specific configs.
constexpr int kFirstStageTypeField = 100;

// The stage-specific config field set in `config`, or an error naming the
// stage when none or several are set.
absl::StatusOr<const FieldDescriptor*> StageTypeField(
    const StageConfig& config) {
  std::vector<const FieldDescriptor*> set;
  std::vector<std::string> known;
  const auto* descriptor = StageConfig::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->number() < kFirstStageTypeField) continue;
    known.push_back(field->name());
    if (config.GetReflection()->HasField(config, field)) set.push_back(field);
  }
  if (set.size() == 1) return set.front();
  const std::string stage = absl::StrCat("stage '", config.name(), "'");
  if (set.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(stage,
                     ": no stage-specific config is set; set exactly "
                     "one of: ",
                     absl::StrJoin(known, ", ")));
  }
  std::vector<std::string> names;
  for (const FieldDescriptor* field : set) names.push_back(field->name());
  return absl::InvalidArgumentError(
      absl::StrCat(stage, ": ", set.size(), " stage-specific configs are set (",
                   absl::StrJoin(names, ", "), "); set exactly one"));
}

// The stage a reference ("stage" or "stage.output") names.
std::string_view StageOfReference(std::string_view reference) {
  return reference.substr(0, reference.find('.'));
}

}  // namespace

std::map<std::string, std::vector<std::string>, std::less<>>
Pipeline::ConsumerTypes(const DataLoaderConfig& config) {
  std::map<std::string, std::vector<std::string>, std::less<>> consumers;
  for (const StageConfig& stage : config.stage()) {
    // A stage without exactly one type fails when it is added.
    const absl::StatusOr<const FieldDescriptor*> type = StageTypeField(stage);
    if (!type.ok()) continue;
    for (const std::string& reference : stage.input()) {
      consumers[std::string(StageOfReference(reference))].push_back(
          (*type)->name());
    }
  }
  for (const std::string& spec : config.output()) {
    // "alias:stage.output": the reference follows the colon.
    const std::string_view reference =
        std::string_view(spec).substr(spec.find(':') + 1);
    consumers[std::string(StageOfReference(reference))].push_back("output");
  }
  return consumers;
}

absl::Status Pipeline::AddStage(const StageConfig& config) {
  if (state_ != State::kConfiguring) {
    return absl::FailedPreconditionError(
        "the pipeline is already started; add stages before Start()");
  }
  const std::string stage = absl::StrCat("stage '", config.name(), "'");
  if (config.name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stage #", stages_.size() + 1, ": field 'name' must not be empty"));
  }
  if (FindStage(config.name()) != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(stage, ": field 'name' duplicates an earlier stage"));
  }
  SLUICE_ASSIGN_OR_RETURN(const FieldDescriptor* type, StageTypeField(config));
  for (const QueueConfig& output : config.output()) {
    if (output.capacity() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(stage, " output '", output.name(),
                       "': field 'capacity' must be at least 1"));
    }
  }
  std::vector<StageInput> inputs;
  for (const std::string& reference : config.input()) {
    SLUICE_ASSIGN_OR_RETURN(ChannelBase * channel,
                            ResolveReference(reference, stage));
    inputs.push_back({reference, channel});
  }

  auto owned_config = std::make_unique<StageConfig>(config);
  const auto consumers = consumer_types_.find(config.name());
  const StageContext context(
      *owned_config, type->name(), type->number(),
      PipelineSettings{.seed = options_.seed(),
                       .deterministic = options_.deterministic(),
                       .resumable = options_.resumable(),
                       .rank = options_.rank(),
                       .world_size = options_.world_size(),
                       .max_tuned_parallelism = MaxTunedParallelism()},
      std::move(inputs),
      consumers != consumer_types_.end() ? consumers->second
                                         : std::vector<std::string>());
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Stage> created, factory_(context));
  if (context.inputs().size() == 1) {
    created->set_upstream(OwnerOf(context.inputs()[0].channel),
                          &checkpoint_gate_);
  }
  for (const QueueConfig& output : config.output()) {
    if (created->GetOutput(output.name()) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(stage, ": field 'output' configures '", output.name(),
                       "' but the stage's outputs are: ",
                       absl::StrJoin(created->OutputNames(), ", ")));
    }
  }
  stages_.push_back(std::move(created));
  stage_configs_.push_back(std::move(owned_config));
  return absl::OkStatus();
}

absl::Status Pipeline::AddOutput(std::string_view spec) {
  std::string_view reference = spec;
  std::string alias(spec);
  if (const size_t colon = spec.find(':'); colon != std::string_view::npos) {
    alias = std::string(spec.substr(0, colon));
    reference = spec.substr(colon + 1);
  }
  const std::string who = absl::StrCat("output '", std::string(spec), "'");
  SLUICE_ASSIGN_OR_RETURN(ChannelBase * channel,
                          ResolveReference(reference, who));
  for (const Output& output : outputs_) {
    if (output.alias == alias) {
      return absl::InvalidArgumentError(
          absl::StrCat(who, ": alias '", alias, "' is used twice"));
    }
  }
  outputs_.push_back({std::move(alias), channel, OwnerOf(channel)});
  output_specs_.emplace_back(spec);
  return absl::OkStatus();
}

absl::StatusOr<ChannelBase*> Pipeline::ResolveReference(
    std::string_view reference, std::string_view who) const {
  std::string_view stage_name = reference;
  std::string_view output_name = "output";
  if (const size_t dot = reference.find('.'); dot != std::string_view::npos) {
    stage_name = reference.substr(0, dot);
    output_name = reference.substr(dot + 1);
  }
  const Stage* stage = FindStage(stage_name);
  if (stage == nullptr) {
    std::vector<std::string> names;
    for (const auto& existing : stages_) names.push_back(existing->name());
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(who), ": '", std::string(reference),
                     "' names no earlier stage (stages so far: ",
                     names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
  }
  ChannelBase* channel = stage->GetOutput(output_name);
  if (channel == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(who), ": stage '", std::string(stage_name),
        "' has no output '", std::string(output_name),
        "' (its outputs: ", absl::StrJoin(stage->OutputNames(), ", "), ")"));
  }
  return channel;
}

Stage* Pipeline::OwnerOf(const ChannelBase* channel) const {
  for (const auto& stage : stages_) {
    for (const std::string& name : stage->OutputNames()) {
      if (stage->GetOutput(name) == channel) return stage.get();
    }
  }
  return nullptr;
}

Stage* Pipeline::FindStage(std::string_view name) const {
  for (const auto& stage : stages_) {
    if (stage->name() == name) return stage.get();
  }
  return nullptr;
}

absl::StatusOr<ChannelBase*> Pipeline::FindOutput(
    std::string_view alias) const {
  if (alias.empty() && !outputs_.empty()) return outputs_.front().channel;
  for (const Output& output : outputs_) {
    if (output.alias == alias) return output.channel;
  }
  std::vector<std::string> aliases;
  for (const Output& output : outputs_) aliases.push_back(output.alias);
  return absl::NotFoundError(
      absl::StrCat("no output '", std::string(alias), "' (outputs: ",
                   outputs_.empty() ? "none yet; Start() the pipeline first"
                                    : absl::StrJoin(aliases, ", "),
                   ")"));
}

PipelineWiring Pipeline::Wiring() const {
  auto name = [this](const ChannelBase* channel) -> PipelineWiring::Channel {
    const Stage* owner = OwnerOf(channel);
    if (owner == nullptr) return {};
    for (const std::string& output : owner->OutputNames()) {
      if (owner->GetOutput(output) == channel) return {owner->name(), output};
    }
    return {};
  };
  PipelineWiring wiring;
  for (const auto& config : stage_configs_) {
    for (const std::string& reference : config->input()) {
      absl::StatusOr<ChannelBase*> channel =
          ResolveReference(reference, config->name());
      if (channel.ok()) {
        wiring.inputs.push_back({config->name(), name(*channel)});
      }
    }
  }
  for (const Output& output : outputs_) {
    PipelineWiring::Channel channel = name(output.channel);
    std::string alias = output.alias.empty()
                            ? absl::StrCat(channel.stage, ".", channel.output)
                            : output.alias;
    wiring.outputs.push_back({std::move(alias), std::move(channel)});
  }
  return wiring;
}

}  // namespace sluice
