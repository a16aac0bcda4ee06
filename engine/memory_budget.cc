#include "engine/memory_budget.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/stage_config_edit.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace sluice {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The groups of settings, lowered in this order.
constexpr MemoryKnob kGroups[][2] = {
    {MemoryKnob::kCapacity, MemoryKnob::kReadahead},
    {MemoryKnob::kReservoir, MemoryKnob::kReservoir},
    {MemoryKnob::kParallelism, MemoryKnob::kParallelism},
};

bool InGroup(const MemoryTerm& term, const MemoryKnob (&group)[2]) {
  return term.knob == group[0] || term.knob == group[1];
}

// A term's count `fraction` of the way from its least to its count.
uint64_t Lowered(const MemoryTerm& term, double fraction) {
  if (term.count <= term.min_count) return term.count;
  const double span = static_cast<double>(term.count - term.min_count);
  return term.min_count + static_cast<uint64_t>(std::floor(span * fraction));
}

uint64_t TotalAt(const MemoryModel& model,
                 const std::vector<uint64_t>& counts) {
  uint64_t total = model.base_bytes();
  for (size_t i = 0; i < counts.size(); ++i) {
    total += model.terms()[i].BytesAt(counts[i]);
  }
  return total;
}

// The refusal: the minimum's arithmetic, term by term, in pipeline order.
absl::Status Refusal(const MemoryModel& model, uint64_t budget) {
  std::string terms;
  for (const MemoryTerm& term : model.terms()) {
    const uint64_t bytes = term.MinimumBytes();
    if (bytes == 0) continue;
    const std::string setting = term.SettingName(model.StageType(term.stage));
    absl::StrAppend(&terms, "\n  + stage '", term.stage, "' ", term.part, ", ",
                    term.what);
    if (!setting.empty()) {
      absl::StrAppend(&terms, " (", setting, " at least ", term.min_count,
                      "; configured ", term.count, ")");
    }
    absl::StrAppend(&terms, ": ", term.min_count, " x ",
                    FormatBytes(term.bytes_each));
    if (term.fixed_bytes > 0) {
      absl::StrAppend(&terms, " + ", FormatBytes(term.fixed_bytes));
    }
    absl::StrAppend(&terms, " = ", FormatBytes(bytes));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "DataLoaderConfig: field 'memory_budget_bytes' (", budget, " = ",
      FormatBytes(budget), ") cannot hold this pipeline's minimum of ",
      model.MinimumBytes(), " bytes (", FormatBytes(model.MinimumBytes()),
      "); its settings as configured need ", FormatBytes(model.Bytes()),
      ". Raise memory_budget_bytes to at least ", model.MinimumBytes(),
      ", or lower the largest of these settings in the config. The minimum:",
      "\n    engine base (", model.threads(),
      " worker threads) = ", FormatBytes(model.base_bytes()), terms));
}

// The stage-specific config message of `stage`.
Message* StageTypeMessage(StageConfig& stage) {
  const google::protobuf::Reflection* reflection = stage.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(stage, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->number() >= 100 &&
        field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      return reflection->MutableMessage(&stage, field);
    }
  }
  return nullptr;
}

absl::Status SetUnsigned(Message& message, const std::string& stage,
                         const std::string& name, uint64_t value) {
  const FieldDescriptor* field = message.GetDescriptor()->FindFieldByName(name);
  if (field == nullptr || field->is_repeated()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "memory plan: stage '", stage, "' has no field '", name, "'"));
  }
  const google::protobuf::Reflection* reflection = message.GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_UINT32:
      reflection->SetUInt32(&message, field, static_cast<uint32_t>(value));
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_UINT64:
      reflection->SetUInt64(&message, field, value);
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("memory plan: field '", name, "' of stage '", stage,
                       "' is not an unsigned integer"));
  }
}

uint64_t GetUnsigned(const Message& message, const FieldDescriptor* field) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  return field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32
             ? reflection->GetUInt32(message, field)
             : reflection->GetUInt64(message, field);
}

absl::Status ApplySetting(const MemorySetting& setting, StageConfig& stage) {
  if (setting.knob == MemoryKnob::kCapacity) {
    SetOutputCapacity(stage, setting.output, setting.to);
    return absl::OkStatus();
  }
  Message* config = StageTypeMessage(stage);
  if (config == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "memory plan: stage '", setting.stage, "' has no stage config"));
  }
  for (const std::string& name : setting.scaled_with) {
    const FieldDescriptor* field =
        config->GetDescriptor()->FindFieldByName(name);
    if (field == nullptr ||
        !config->GetReflection()->HasField(*config, field)) {
      continue;  // unset: follows the lowered field by its own default
    }
    const uint64_t old = GetUnsigned(*config, field);
    const uint64_t scaled = static_cast<uint64_t>(
        static_cast<double>(old) * static_cast<double>(setting.to) /
        static_cast<double>(std::max<uint64_t>(setting.from, 1)));
    if (absl::Status status =
            SetUnsigned(*config, setting.stage, name, std::min(old, scaled));
        !status.ok()) {
      return status;
    }
  }
  return SetUnsigned(*config, setting.stage, setting.field, setting.to);
}

}  // namespace

bool MemoryPlan::ChangesSomething() const {
  return std::any_of(settings.begin(), settings.end(),
                     [](const MemorySetting& s) { return s.to != s.from; });
}

MemoryBudgetMetricsProto MemoryPlan::ToProto() const {
  MemoryBudgetMetricsProto proto;
  proto.set_budget_bytes(budget_bytes);
  proto.set_configured_bytes(configured_bytes);
  proto.set_planned_bytes(planned_bytes);
  proto.set_minimum_bytes(minimum_bytes);
  for (const MemorySetting& setting : settings) {
    MemorySettingProto& out = *proto.add_setting();
    out.set_stage(setting.stage);
    out.set_setting(setting.setting_name);
    out.set_configured(setting.from);
    out.set_planned(setting.to);
    out.set_bytes_each(setting.bytes_each);
  }
  return proto;
}

absl::StatusOr<MemoryPlan> PlanMemory(const MemoryModel& model,
                                      uint64_t budget_bytes) {
  MemoryPlan plan;
  plan.budget_bytes = budget_bytes;
  plan.configured_bytes = model.Bytes();
  plan.minimum_bytes = model.MinimumBytes();
  if (budget_bytes < plan.minimum_bytes) return Refusal(model, budget_bytes);
  const std::vector<MemoryTerm>& terms = model.terms();
  std::vector<uint64_t> counts;
  for (const MemoryTerm& term : terms) counts.push_back(term.count);
  for (const auto& group : kGroups) {
    if (TotalAt(model, counts) <= budget_bytes) break;
    auto at = [&](double fraction) {
      std::vector<uint64_t> lowered = counts;
      for (size_t i = 0; i < terms.size(); ++i) {
        if (InGroup(terms[i], group)) lowered[i] = Lowered(terms[i], fraction);
      }
      return lowered;
    };
    // The largest fraction that fits (the total grows with it); 0 (every
    // setting of the group at its least) when none does.
    double low = 0, high = 1;
    for (int step = 0; step < 50; ++step) {
      const double middle = (low + high) / 2;
      (TotalAt(model, at(middle)) <= budget_bytes ? low : high) = middle;
    }
    counts = at(low);
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    const MemoryTerm& term = terms[i];
    if (term.knob == MemoryKnob::kFixed) continue;
    plan.settings.push_back(
        {.stage = term.stage,
         .knob = term.knob,
         .field = term.field,
         .output = term.output,
         .from = term.count,
         .to = counts[i],
         .bytes_each = term.bytes_each,
         .scaled_with = term.scaled_with,
         .setting_name = term.SettingName(model.StageType(term.stage))});
  }
  plan.planned_bytes = TotalAt(model, counts);
  return plan;
}

absl::Status ApplyMemoryPlan(const MemoryPlan& plan, DataLoaderConfig* config) {
  for (const MemorySetting& setting : plan.settings) {
    if (setting.to == setting.from) continue;
    StageConfig* stage = nullptr;
    for (StageConfig& candidate : *config->mutable_stage()) {
      if (candidate.name() == setting.stage) stage = &candidate;
    }
    if (stage == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "memory plan: the config has no stage '", setting.stage, "'"));
    }
    if (absl::Status status = ApplySetting(setting, *stage); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace sluice
