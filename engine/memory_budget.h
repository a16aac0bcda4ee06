// PlanMemory: the settings of a pipeline that fit a memory budget, from its
// memory model (engine/memory_model.h). The pipeline plans when it is
// configured with DataLoaderConfig.memory_budget_bytes and builds its
// stages from the planned config.
//
//   SLUICE_ASSIGN_OR_RETURN(MemoryPlan plan, PlanMemory(model, budget));
//   SLUICE_RETURN_IF_ERROR(ApplyMemoryPlan(plan, &config));
//
// Promises:
// - A pure function of the model and the budget (so of the config and the
//   budget): the same inputs give the same plan on every rank and run.
// - A budget the configured settings fit changes nothing.
// - Otherwise settings are lowered group by group, each group as far as
//   needed and no further, every setting of a group by the same fraction
//   of its way down to its least: first output capacities and read-ahead
//   (they cost throughput only when very small), then reservoirs (shuffle
//   quality; down to a tenth of their size), then parallelism
//   (throughput). A reservoir's min_fill, when set, is lowered in
//   proportion. The planned model is at most the budget.
// - A budget below the model's minimum (every setting at its least) is
//   refused: InvalidArgument naming memory_budget_bytes, with the
//   arithmetic of the minimum term by term (stage, what, setting,
//   count x bytes) and what the configured settings need.
#ifndef SLUICE_ENGINE_MEMORY_BUDGET_H_
#define SLUICE_ENGINE_MEMORY_BUDGET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/memory_model.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice {

// One setting of the model, as configured and as planned.
struct MemorySetting {
  std::string stage;
  MemoryKnob knob = MemoryKnob::kFixed;
  std::string field;   // the stage-specific field, or "capacity"
  std::string output;  // kCapacity: the output's name
  uint64_t from = 0;
  uint64_t to = 0;
  uint64_t bytes_each = 0;
  std::vector<std::string> scaled_with;  // lowered by to / from too
  // As the config names it ("output 'output' capacity").
  std::string setting_name;
};

struct MemoryPlan {
  uint64_t budget_bytes = 0;
  // Every setting of the model (knob not kFixed), in pipeline order.
  std::vector<MemorySetting> settings;
  uint64_t planned_bytes = 0;
  uint64_t minimum_bytes = 0;
  uint64_t configured_bytes = 0;

  // Whether any setting was lowered.
  bool ChangesSomething() const;
  // The plan as metrics.
  MemoryBudgetMetricsProto ToProto() const;
};

// The plan for `budget_bytes` (> 0); see the file comment.
absl::StatusOr<MemoryPlan> PlanMemory(const MemoryModel& model,
                                      uint64_t budget_bytes);

// Writes the plan's lowered settings into `config`: output capacities into
// the stage's `output` entries (added when missing), other fields into the
// stage-specific config by name. InvalidArgument when a stage or field is
// not found (a stage's model naming a field its config does not have).
absl::Status ApplyMemoryPlan(const MemoryPlan& plan, DataLoaderConfig* config);

}  // namespace sluice

#endif  // SLUICE_ENGINE_MEMORY_BUDGET_H_
