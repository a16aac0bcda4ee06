#include "bindings/report/run_analysis.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "engine/memory_model.h"

namespace sluice::report {
namespace {

// The stage whose first output feeds the pipeline's first output.
std::string OutputStageName(const DataLoaderConfig& config) {
  std::string reference;
  if (config.output_size() > 0) {
    reference = config.output(0);
    if (const size_t colon = reference.find(':'); colon != std::string::npos) {
      reference = reference.substr(colon + 1);
    }
  } else if (config.stage_size() > 0) {
    reference = config.stage(config.stage_size() - 1).name();
  }
  return reference.substr(0, reference.find('.'));
}

}  // namespace

const StageMetricProto* FindStage(
    const google::protobuf::RepeatedPtrField<StageMetricProto>& stages,
    absl::string_view name) {
  for (const StageMetricProto& stage : stages) {
    if (stage.name() == name) return &stage;
  }
  return nullptr;
}

Throughput ComputeThroughput(const DataLoaderConfig& config,
                             const DataLoaderMetricsProto& metrics,
                             bool totals) {
  const auto& stages =
      totals ? metrics.total_stage_metrics() : metrics.stage_metrics();
  const double seconds =
      totals ? metrics.elapsed_seconds() : metrics.interval_seconds();
  Throughput throughput;
  for (const StageConfig& stage : config.stage()) {
    if (stage.has_tensor_generator()) throughput.unit = "positions";
    if (stage.has_audio_decoder()) throughput.unit = "clips";
  }
  if (const StageMetricProto* output =
          FindStage(stages, OutputStageName(config));
      output != nullptr && output->output_queue_metrics_size() > 0) {
    throughput.batches = output->output_queue_metrics(0).get_count();
  }
  if (seconds <= 0) return throughput;
  throughput.batches_per_second = throughput.batches / seconds;
  uint64_t examples = 0;
  for (const StageMetricProto& stage : stages) {
    examples +=
        stage.tensor_generator().positions() + stage.batcher().examples();
  }
  throughput.examples_per_second = examples / seconds;
  return throughput;
}

ChannelFill AverageChannelFill(
    const std::vector<MetricsHistory::Sample>& history) {
  ChannelFill sum;
  for (const MetricsHistory::Sample& sample : history) {
    for (const StageMetricProto& stage : sample.metrics.stage_metrics()) {
      for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
        if (queue.capacity() == 0) continue;
        sum[stage.name() + "." + queue.name()] +=
            static_cast<double>(queue.size()) / queue.capacity();
      }
    }
  }
  for (auto& [channel, total] : sum)
    total /= std::max<size_t>(history.size(), 1);
  return sum;
}

std::vector<StageEvidence> GatherEvidence(const DataLoaderConfig& config,
                                          const DataLoaderMetricsProto& metrics,
                                          const ChannelFill& fill) {
  std::vector<StageEvidence> evidence;
  for (const StageConfig& stage : config.stage()) {
    const StageMetricProto* own =
        FindStage(metrics.total_stage_metrics(), stage.name());
    if (own == nullptr) continue;
    const LoadMetricProto& load = own->load();
    StageEvidence seen{.stage = own->name(),
                       .type = own->type(),
                       .busy_seconds = load.busy_seconds()};
    seen.run_load = load.capacity_seconds() > 0
                        ? load.busy_seconds() / load.capacity_seconds()
                        : 0;
    seen.busy_enough = load.busy_seconds() >= kMinBottleneckBusySeconds &&
                       load.capacity_seconds() > 0;
    for (const std::string& input : stage.input()) {
      const std::string key =
          input.find('.') == std::string::npos ? input + ".output" : input;
      auto it = fill.find(key);
      if (it == fill.end()) continue;
      seen.input_fill = std::min(seen.input_fill.value_or(1.0), it->second);
      if (it->second < 0.25) seen.starved = true;
    }
    evidence.push_back(std::move(seen));
  }
  return evidence;
}

Bottleneck FindBottleneck(const DataLoaderConfig& config,
                          const DataLoaderMetricsProto& metrics,
                          const ChannelFill& fill) {
  const std::vector<StageEvidence> evidence =
      GatherEvidence(config, metrics, fill);
  const StageEvidence* best = nullptr;
  const StageEvidence* busiest = nullptr;
  for (const StageEvidence& stage : evidence) {
    if (busiest == nullptr || stage.busy_seconds > busiest->busy_seconds) {
      busiest = &stage;
    }
    if (!stage.busy_enough || stage.starved) continue;
    if (best == nullptr || stage.run_load > best->run_load) best = &stage;
  }
  if (best != nullptr) return {.stage = best->stage};
  if (busiest == nullptr) return {.why_none = "no stage reported metrics"};
  if (busiest->busy_seconds >= kMinBottleneckBusySeconds) {
    return {.why_none = "every busy stage was starved by its input"};
  }
  return {.why_none = absl::StrFormat(
              "none named, the run was too short (the busiest stage, %s, was "
              "busy %.2fs; %.1fs needed)",
              busiest->stage, busiest->busy_seconds,
              kMinBottleneckBusySeconds)};
}

std::string MemoryBudgetLine(const DataLoaderMetricsProto& metrics) {
  if (!metrics.has_memory_budget()) return "";
  const MemoryBudgetMetricsProto& plan = metrics.memory_budget();
  std::string lowered;
  for (const MemorySettingProto& setting : plan.setting()) {
    if (setting.planned() == setting.configured()) continue;
    absl::StrAppend(&lowered, lowered.empty() ? "" : ", ", setting.stage(), " ",
                    setting.setting(), " ", setting.configured(), " -> ",
                    setting.planned());
  }
  return absl::StrCat(
      "memory budget ", FormatBytes(plan.budget_bytes()), ": planned ",
      FormatBytes(plan.planned_bytes()), " (configured ",
      FormatBytes(plan.configured_bytes()), ", minimum ",
      FormatBytes(plan.minimum_bytes()), "); ",
      lowered.empty() ? "nothing lowered" : "lowered: " + lowered);
}

std::string AutotuneLine(const DataLoaderMetricsProto& metrics) {
  if (!metrics.has_autotune()) return "";
  const AutotuneMetricsProto& tuner = metrics.autotune();
  std::string raised;
  for (const AutotuneSettingProto& setting : tuner.setting()) {
    if (setting.chosen() == setting.configured()) continue;
    absl::StrAppend(&raised, raised.empty() ? "" : ", ", setting.stage(), " ",
                    setting.setting(), " ", setting.configured(), " -> ",
                    setting.chosen());
  }
  return absl::StrCat(
      "autotune (", tuner.settled() ? "settled" : "tuning", ", ",
      tuner.adjustments(), " of ", tuner.trials(),
      " raises kept): ", raised.empty() ? "nothing raised" : raised);
}

}  // namespace sluice::report
