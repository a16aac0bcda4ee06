// Pipeline's memory budget (DataLoaderConfig.memory_budget_bytes): the
// stages' memory model, the plan for the budget and the rebuild of the
// stages from the planned config.
#include <algorithm>
#include <utility>
#include <vector>

#include "engine/memory_budget.h"
#include "engine/pipeline.h"
#include "engine/status_macros.h"
#include "engine/worker_placement.h"

namespace sluice {
namespace {

// In deterministic mode the batches must not depend on the machine: a
// reservoir the plan lowers is sized from a model whose engine base counts
// the worker threads, so with worker_threads 0 (the CPUs) it is refused.
absl::Status CheckPlanIsMachineFree(const DataLoaderConfig& options,
                                    unsigned threads, const MemoryPlan& plan) {
  if (!options.deterministic() || options.worker_threads() > 0) {
    return absl::OkStatus();
  }
  for (const MemorySetting& setting : plan.settings) {
    if (setting.knob != MemoryKnob::kReservoir || setting.to >= setting.from) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "DataLoaderConfig: deterministic with memory_budget_bytes ",
        plan.budget_bytes, " lowers stage '", setting.stage, "' ",
        setting.setting_name, " from ", setting.from, " to ", setting.to,
        ", and with field 'worker_threads' 0 that size would depend on the "
        "machine's CPUs (",
        threads, " here), and the batches with it; set worker_threads (e.g. ",
        threads, "), or a budget that lowers no reservoir"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Pipeline::AddStagesAndOutputs(const DataLoaderConfig& config) {
  consumer_types_ = ConsumerTypes(config);
  for (const StageConfig& stage : config.stage()) {
    SLUICE_RETURN_IF_ERROR(AddStage(stage));
  }
  consumer_types_.clear();
  for (const std::string& output : config.output()) {
    SLUICE_RETURN_IF_ERROR(AddOutput(output));
  }
  return absl::OkStatus();
}

MemoryModel Pipeline::BuildMemoryModel() const {
  MemoryModelBuilder builder(Threads());
  for (size_t i = 0; i < stages_.size(); ++i) {
    std::vector<const ChannelBase*> inputs;
    for (const std::string& reference : stage_configs_[i]->input()) {
      absl::StatusOr<ChannelBase*> channel =
          ResolveReference(reference, stages_[i]->name());
      inputs.push_back(channel.ok() ? *channel : nullptr);
    }
    builder.BeginStage(stages_[i]->name(), stages_[i]->type(),
                       std::move(inputs));
    stages_[i]->DescribeMemory(builder);
  }
  return std::move(builder).Build();
}

absl::Status Pipeline::FitMemoryBudget(const DataLoaderConfig& config) {
  SLUICE_ASSIGN_OR_RETURN(
      MemoryPlan plan,
      PlanMemory(BuildMemoryModel(), config.memory_budget_bytes()));
  memory_plan_ = plan.ToProto();
  if (!plan.ChangesSomething()) return absl::OkStatus();
  SLUICE_RETURN_IF_ERROR(CheckPlanIsMachineFree(options_, Threads(), plan));
  DataLoaderConfig planned = config;
  SLUICE_RETURN_IF_ERROR(ApplyMemoryPlan(plan, &planned));
  outputs_.clear();
  output_specs_.clear();
  // Downstream first: a stage may point at its input's channel.
  while (!stages_.empty()) stages_.pop_back();
  stage_configs_.clear();
  return AddStagesAndOutputs(planned);
}

}  // namespace sluice
