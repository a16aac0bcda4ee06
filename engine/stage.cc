#include "engine/stage.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice {

Stage::Stage(const StageContext& context)
    : name_(context.name()),
      type_(context.type()),
      output_settings_(context.config().output().begin(),
                       context.config().output().end()) {}

void Stage::Stop() {
  for (const auto& output : outputs_) output->Cancel();
  if (ordered_output_ != nullptr) ordered_output_->Cancel();
  if (gate_ != nullptr) gate_->Close();
  abort_signal_.Abort();
}

void Stage::CloseOutputs() {
  for (const auto& output : outputs_) output->Close();
}

StageMetricProto Stage::FlushMetrics() {
  StageMetricProto metrics;
  metrics.set_name(name_);
  metrics.set_type(type_);
  *metrics.mutable_load() = load_meter_.Flush();
  {
    std::lock_guard lock(skips_mu_);
    for (const auto& [reason, count] : skips_) {
      SkipCountProto* skip = metrics.add_skipped();
      skip->set_reason(reason);
      skip->set_count(count);
    }
    skips_.clear();
  }
  if (ordered_output_ != nullptr) {
    *metrics.mutable_reorder() = ordered_output_->TakeMetrics();
  }
  AddMetrics(metrics);
  for (const auto& output : outputs_) {
    *metrics.add_output_queue_metrics() = output->Metrics(/*reset=*/true);
  }
  return metrics;
}

void Stage::DescribeMemory(MemoryModelBuilder& builder) const {
  for (const auto& output : outputs_) {
    builder.AddOutput(output.get(), output->name(), builder.InputItemBytes());
  }
}

ChannelBase* Stage::GetOutput(std::string_view name) const {
  for (const auto& output : outputs_) {
    if (output->name() == name) return output.get();
  }
  return nullptr;
}

std::vector<ChannelBase*> Stage::Outputs() const {
  std::vector<ChannelBase*> outputs;
  for (const auto& output : outputs_) outputs.push_back(output.get());
  return outputs;
}

std::vector<std::string> Stage::OutputNames() const {
  std::vector<std::string> names;
  for (const auto& output : outputs_) names.push_back(output->name());
  return names;
}

std::optional<StageControlResponse> Stage::Control(
    const StageControlRequest& request) {
  return std::nullopt;
}

absl::StatusOr<std::optional<ResumeRequest>> Stage::SaveCheckpoint(
    const ResumeRequest& downstream, std::string* state) {
  return absl::UnimplementedError(
      absl::StrCat("stage '", name_, "' (", type_, ") cannot be checkpointed"));
}

absl::Status Stage::RestoreCheckpoint(const std::string& state) {
  return absl::UnimplementedError(absl::StrCat(
      "stage '", name_, "' (", type_, ") cannot resume from a checkpoint"));
}

absl::StatusOr<std::optional<ElasticRequest>> Stage::PlanElasticResume(
    const std::vector<std::string>& states, const ElasticRequest& downstream,
    ElasticResume& resume) {
  return absl::UnimplementedError(
      absl::StrCat("stage '", name_, "' (", type_,
                   ") cannot resume on another number of ranks"));
}

void Stage::SpawnWorkers(
    const StageRuntime& runtime, int count,
    const std::function<asio::awaitable<void>(int)>& make_worker) {
  running_workers_.fetch_add(count);
  for (int i = 0; i < count; ++i) {
    runtime.tasks->Spawn(name_, RunWorker(make_worker(i)));
  }
}

asio::awaitable<void> Stage::RunWorker(asio::awaitable<void> work) {
  load_meter_.WorkerStarted();
  try {
    co_await std::move(work);
  } catch (...) {
    load_meter_.WorkerFinished();
    running_workers_.fetch_sub(1);
    throw;
  }
  load_meter_.WorkerFinished();
  if (running_workers_.fetch_sub(1) == 1) CloseOutputs();
}

void Stage::AcknowledgeUpstream(uint64_t consumed) {
  if (upstream_ == nullptr) return;
  std::shared_lock gate(*checkpoint_gate_, std::try_to_lock);
  if (gate.owns_lock()) upstream_->Acknowledge(consumed);
}

void Stage::CountSkip(std::string_view reason, uint64_t count) {
  std::lock_guard lock(skips_mu_);
  auto it = skips_.find(reason);
  if (it == skips_.end()) it = skips_.emplace(std::string(reason), 0).first;
  it->second += count;
}

OverflowPolicy Stage::ToPolicy(QueueConfig::OverflowBehavior behavior) {
  switch (behavior) {
    case QueueConfig::BLOCK:
      return OverflowPolicy::kBlock;
    case QueueConfig::DROP_NEW:
      return OverflowPolicy::kDropNew;
    case QueueConfig::KEEP_NEWEST:
      return OverflowPolicy::kKeepNewest;
  }
  return OverflowPolicy::kBlock;
}

QueueConfig Stage::OutputSettings(std::string_view output_name,
                                  size_t default_capacity) const {
  QueueConfig settings;
  settings.set_name(std::string(output_name));
  settings.set_capacity(default_capacity);
  for (const QueueConfig& configured : output_settings_) {
    if (configured.name() != output_name) continue;
    if (configured.has_capacity()) settings.set_capacity(configured.capacity());
    settings.set_overflow_behavior(configured.overflow_behavior());
  }
  return settings;
}

}  // namespace sluice
