// Pipeline's lifecycle: Configure, Start and Stop, failure, handing out
// the first output's items and control messages. The other parts of
// Pipeline live beside it: pipeline_wiring.cc (stages, outputs and the
// references between them), pipeline_checkpoint.cc, pipeline_metrics.cc
// and pipeline_trace.cc.
#include "engine/pipeline.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "engine/log.h"
#include "engine/metrics_exporter.h"
#include "engine/status_macros.h"

namespace sluice {
namespace {

std::string DescribeException(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

WorkerPlacement PlacementOf(DataLoaderConfig::WorkerPlacement placement) {
  switch (placement) {
    case DataLoaderConfig::PINNED:
      return WorkerPlacement::kPinned;
    case DataLoaderConfig::FLOATING:
      return WorkerPlacement::kFloating;
    default:
      return WorkerPlacement::kAuto;
  }
}

Pipeline::Pipeline(StageFactory factory)
    : factory_(std::move(factory)),
      started_at_(std::chrono::steady_clock::now()),
      last_snapshot_at_(started_at_) {}

Pipeline::~Pipeline() { Stop(); }

absl::Status Pipeline::Configure(const DataLoaderConfig& config) {
  if (state_ != State::kConfiguring) {
    return absl::FailedPreconditionError(
        "the pipeline is already started; configure it before Start()");
  }
  if (config.metrics_interval_seconds() <= 0) {
    return absl::InvalidArgumentError(
        "DataLoaderConfig: field 'metrics_interval_seconds' must be > 0");
  }
  if (config.world_size() == 0) {
    return absl::InvalidArgumentError(
        "DataLoaderConfig: field 'world_size' must be at least 1");
  }
  if (config.rank() >= config.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("DataLoaderConfig: field 'rank' (", config.rank(),
                     ") must be below world_size (", config.world_size(), ")"));
  }
  SLUICE_RETURN_IF_ERROR(MetricsExporter::CheckConfig(config));
  if (config.has_trace()) {
    SLUICE_RETURN_IF_ERROR(TraceRecorder::Validate(config.trace()));
    trace_ = std::make_unique<TraceRecorder>(config.trace());
  }
  options_ = config;
  options_.clear_stage();
  options_.clear_output();
  SLUICE_RETURN_IF_ERROR(AddStagesAndOutputs(config));
  if (config.memory_budget_bytes() > 0) {
    SLUICE_RETURN_IF_ERROR(FitMemoryBudget(config));
  }
  if (config.world_size() > 1 &&
      std::none_of(stages_.begin(), stages_.end(),
                   [](const auto& stage) { return stage->ShardsByRank(); })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DataLoaderConfig: world_size is ", config.world_size(),
        " but no stage of this pipeline reads a shard (shuffling_chunk_pool "
        "and arrow_source do)"));
  }
  return absl::OkStatus();
}

absl::Status Pipeline::Start() {
  if (state_ != State::kConfiguring) {
    return absl::FailedPreconditionError("the pipeline was already started");
  }
  if (stages_.empty()) {
    return absl::FailedPreconditionError("the pipeline has no stages");
  }
  if (outputs_.empty()) {
    const Stage& last = *stages_.back();
    const std::vector<std::string> names = last.OutputNames();
    if (!names.empty()) {
      outputs_.push_back(
          {"", last.GetOutput(names.front()), stages_.back().get()});
    }
  }
  if (options_.metrics_port() != 0) {
    SLUICE_ASSIGN_OR_RETURN(metrics_exporter_,
                            MetricsExporter::Start(options_, Wiring(), [this] {
                              return LatestSnapshot();
                            }));
  }
  executor_ = std::make_unique<Executor>(
      Executor::Options{.threads = options_.worker_threads(),
                        .placement = PlacementOf(options_.worker_placement()),
                        .use_io_uring = options_.use_io_uring()});
  tasks_ = std::make_unique<TaskGroup>(
      executor_->get(),
      [this](const std::string& owner, std::exception_ptr error) {
        Fail(owner, error);
      });
  state_ = State::kRunning;
  started_at_ = last_snapshot_at_ = std::chrono::steady_clock::now();
  if (Resumable() && outputs_.size() == 1) {
    for (Stage* stage = outputs_.front().owner; stage != nullptr;
         stage = stage->upstream()) {
      stage->PrepareCheckpoints();
    }
  }
  if (trace_ != nullptr) StartTrace();
  if (options_.autotune()) SetUpAutotune();
  const StageRuntime runtime{executor_.get(), tasks_.get()};
  for (const auto& stage : stages_) stage->Start(runtime);
  tasks_->Spawn("metrics", MetricsLoop());
  if (autotuner_ != nullptr) tasks_->Spawn("autotune", AutotuneLoop());
  if (trace_ != nullptr) tasks_->Spawn("trace", TraceFillLoop());
  executor_->Start();
  return absl::OkStatus();
}

void Pipeline::Stop() {
  if (state_ != State::kRunning) {
    state_ = State::kStopped;
    return;
  }
  state_ = State::kStopped;
  AbortAll();
  if (executor_->RunningInThisThread()) {
    LogError("Pipeline::Stop() called from an executor thread; not waiting");
    return;
  }
  if (!tasks_->WaitIdle(std::chrono::seconds(30))) {
    LogError("pipeline: ", tasks_->active(),
             " coroutine(s) still running 30 s after Stop()");
  }
  TakeSnapshot();
  executor_->Stop();
  metrics_exporter_.reset();
  WriteTrace();
}

void Pipeline::AbortAll() {
  // Downstream first: a stage whose input is cancelled finds its own
  // output cancelled already, and does not take the end of its input for
  // the end of the stream.
  for (auto stage = stages_.rbegin(); stage != stages_.rend(); ++stage) {
    (*stage)->Stop();
  }
  abort_.Abort();
}

void Pipeline::Fail(const std::string& owner, std::exception_ptr error) {
  const std::string message = DescribeException(error);
  {
    std::lock_guard lock(failure_mu_);
    if (!failure_.ok()) return;
    failure_ = absl::InternalError(
        absl::StrCat("stage '", owner, "' failed: ", message));
  }
  LogError("stage '", owner, "' failed: ", message);
  AbortAll();
}

absl::Status Pipeline::status() const {
  std::lock_guard lock(failure_mu_);
  return failure_;
}

ChannelBase::TakeResult Pipeline::TakeAndDiscard(
    std::chrono::nanoseconds timeout) {
  if (outputs_.empty()) return ChannelBase::TakeResult::kEndOfStream;
  ChannelBase* channel = outputs_.front().channel;
  const auto asked_at = trace_ != nullptr
                            ? std::chrono::steady_clock::now()
                            : std::chrono::steady_clock::time_point();
  const ChannelBase::TakeResult taken = channel->TakeAndDiscard(timeout);
  if (taken == ChannelBase::TakeResult::kItem) Delivered(channel, asked_at);
  return taken;
}

void Pipeline::Delivered(const ChannelBase* channel,
                         std::chrono::steady_clock::time_point asked_at) {
  if (trace_ != nullptr && handed_out_ != nullptr) {
    for (uint32_t i = 0; i < outputs_.size(); ++i) {
      if (outputs_[i].channel != channel) continue;
      trace_->RecordBatch(i, handed_out_[i].fetch_add(1) + 1, asked_at,
                          std::chrono::steady_clock::now());
    }
  }
  if (outputs_.empty() || channel != outputs_.front().channel) return;
  const uint64_t delivered = delivered_.fetch_add(1) + 1;
  if (Resumable() && outputs_.front().owner != nullptr) {
    const std::shared_lock gate(checkpoint_gate_);
    outputs_.front().owner->Acknowledge(delivered - resumed_at_);
  }
}

std::vector<StageControlResponse> Pipeline::SendControlMessage(
    const StageControlRequest& request) {
  std::vector<StageControlResponse> responses;
  for (const auto& stage : stages_) {
    std::optional<StageControlResponse> response = stage->Control(request);
    if (!response.has_value()) continue;
    response->set_stage_name(stage->name());
    responses.push_back(std::move(*response));
  }
  return responses;
}

}  // namespace sluice
