#include "engine/pipeline.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "engine/log.h"
#include "engine/metrics_accumulator.h"
#include "engine/metrics_exporter.h"
#include "engine/process_stats.h"
#include "engine/stable_hash.h"
#include "engine/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/message_differencer.h"

namespace sluice {
namespace {

using google::protobuf::FieldDescriptor;

// The LoaderCheckpoint.format this build writes and reads.
constexpr uint32_t kCheckpointFormat = 2;

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

std::string DescribeException(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

uint64_t DigestOf(const LoaderCheckpoint& checkpoint) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  checkpoint.SerializeToCodedStream(&coded);
  coded.Trim();
  return Fnv1a64(bytes);
}

// Clears every field of `message` (recursively) whose name ends in
// "parallelism": in deterministic mode they do not change the batches.
void ClearParallelism(google::protobuf::Message& message) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (absl::EndsWith(field->name(), "parallelism")) {
      reflection->ClearField(&message, field);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          ClearParallelism(
              *reflection->MutableRepeatedMessage(&message, field, i));
        }
      } else {
        ClearParallelism(*reflection->MutableMessage(&message, field));
      }
    }
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

std::string SerializeCheckpoint(LoaderCheckpoint checkpoint) {
  checkpoint.clear_digest();
  checkpoint.set_digest(DigestOf(checkpoint));
  return checkpoint.SerializeAsString();
}

absl::StatusOr<LoaderCheckpoint> ParseCheckpoint(std::string_view bytes) {
  LoaderCheckpoint checkpoint;
  if (bytes.empty() || !checkpoint.ParseFromArray(
                           bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the checkpoint (", bytes.size(),
        " bytes) does not parse: damaged, truncated or not a checkpoint"));
  }
  const uint64_t digest = checkpoint.digest();
  checkpoint.clear_digest();
  if (digest != DigestOf(checkpoint)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the checkpoint (", bytes.size(),
                     " bytes) fails its digest check: damaged or truncated"));
  }
  return checkpoint;
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
  for (const StageConfig& stage : config.stage()) {
    SLUICE_RETURN_IF_ERROR(AddStage(stage));
  }
  for (const std::string& output : config.output()) {
    SLUICE_RETURN_IF_ERROR(AddOutput(output));
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
  const StageContext context(
      *owned_config, type->name(), type->number(),
      PipelineSettings{.seed = options_.seed(),
                       .deterministic = options_.deterministic(),
                       .resumable = options_.resumable(),
                       .rank = options_.rank(),
                       .world_size = options_.world_size()},
      std::move(inputs));
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
  const StageRuntime runtime{executor_.get(), tasks_.get()};
  for (const auto& stage : stages_) stage->Start(runtime);
  tasks_->Spawn("metrics", MetricsLoop());
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

void Pipeline::StartTrace() {
  for (uint32_t i = 0; i < stages_.size(); ++i) {
    Stage& stage = *stages_[i];
    const uint32_t track = trace_->AddStage(stage.name(), stage.type());
    stage.TraceInto(trace_.get(), track);
    for (const std::string& name : stage.OutputNames()) {
      ChannelBase* channel = stage.GetOutput(name);
      traced_channels_.emplace_back(
          channel, trace_->AddChannel(track, name, channel->capacity()));
    }
  }
  for (const Output& output : outputs_) trace_->AddOutput(output.alias);
  handed_out_ = std::make_unique<std::atomic<uint64_t>[]>(outputs_.size());
  executor_->file_reader().SetObserver(trace_.get());
  trace_->Begin(started_at_);
}

asio::awaitable<void> Pipeline::TraceFillLoop() {
  // The last fill recorded per channel: a counter is recorded when it moves.
  std::vector<int64_t> last(traced_channels_.size(), -1);
  do {
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < traced_channels_.size(); ++i) {
      const auto& [channel, track] = traced_channels_[i];
      const auto size = static_cast<int64_t>(channel->Size());
      if (size == last[i]) continue;
      last[i] = size;
      trace_->RecordFill(track, now, static_cast<uint64_t>(size));
    }
  } while (co_await abort_.SleepFor(trace_->counter_interval()));
}

void Pipeline::WriteTrace() {
  if (trace_ == nullptr || trace_written_) return;
  trace_written_ = true;
  executor_->file_reader().SetObserver(nullptr);
  absl::Status written = trace_->WriteFile();
  if (!written.ok()) {
    written = absl::Status(
        written.code(),
        absl::StrCat("DataLoaderConfig: field 'trace.file': ",
                     "cannot write the trace: ", written.message()));
    LogError(written.message());
  } else if (trace_->dropped() > 0) {
    LogWarning("trace: ", trace_->dropped(),
               " events were left out (trace.max_events is ",
               options_.trace().max_events(), ")");
  }
  std::lock_guard lock(trace_mu_);
  trace_status_ = std::move(written);
}

absl::Status Pipeline::trace_status() const {
  std::lock_guard lock(trace_mu_);
  return trace_status_;
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

asio::awaitable<void> Pipeline::MetricsLoop() {
  const auto interval = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(options_.metrics_interval_seconds()));
  while (co_await abort_.SleepFor(interval)) TakeSnapshot();
}

void Pipeline::TakeSnapshot() {
  std::lock_guard lock(metrics_mu_);
  const auto now = std::chrono::steady_clock::now();
  DataLoaderMetricsProto snapshot;
  snapshot.set_interval_seconds(
      std::chrono::duration<double>(now - last_snapshot_at_).count());
  snapshot.set_elapsed_seconds(
      std::chrono::duration<double>(now - started_at_).count());
  snapshot.set_snapshot_index(latest_->snapshot_index() +
                              (has_snapshot_ ? 1 : 0));
  if (executor_ != nullptr) {
    snapshot.set_io_backend(std::string(executor_->io_backend()));
    const io::AsyncFileReader::Counts reads = executor_->file_reader().counts();
    snapshot.set_reads_from_page_cache(reads.inline_reads);
    snapshot.set_reads_through_backend(reads.backend_reads);
    snapshot.set_reads_served_at_submit(reads.served_at_submit);
    snapshot.set_reads_bounced_for_direct_io(reads.bounced_reads);
    snapshot.set_bytes_from_page_cache(reads.inline_bytes);
    snapshot.set_bytes_through_backend(reads.backend_bytes);
  }
  snapshot.set_rss_bytes(ReadResidentBytes());
  totals_.resize(stages_.size());
  for (size_t i = 0; i < stages_.size(); ++i) {
    StageMetricProto interval = stages_[i]->FlushMetrics();
    AccumulateMetrics(interval, &totals_[i]);
    *snapshot.add_stage_metrics() = std::move(interval);
    *snapshot.add_total_stage_metrics() = totals_[i];
  }
  // Snapshots taken before Start() are not part of the run.
  if (executor_ != nullptr) history_.Add(snapshot);
  last_snapshot_at_ = now;
  latest_ = std::make_shared<const DataLoaderMetricsProto>(std::move(snapshot));
  has_snapshot_ = true;
}

std::vector<MetricsHistory::Sample> Pipeline::GetHistory() {
  std::lock_guard lock(metrics_mu_);
  return history_.Samples();
}

DataLoaderMetricsProto Pipeline::GetMetrics() {
  bool need_snapshot;
  {
    std::lock_guard lock(metrics_mu_);
    need_snapshot = !has_snapshot_;
  }
  if (need_snapshot) TakeSnapshot();
  DataLoaderMetricsProto metrics;
  {
    std::lock_guard lock(metrics_mu_);
    metrics = *latest_;
  }
  if (absl::Status failure = status(); !failure.ok()) {
    metrics.set_error(std::string(failure.message()));
  }
  return metrics;
}

uint16_t Pipeline::metrics_port() const {
  return metrics_exporter_ != nullptr ? metrics_exporter_->port() : 0;
}

std::shared_ptr<const DataLoaderMetricsProto> Pipeline::LatestSnapshot() {
  std::shared_ptr<const DataLoaderMetricsProto> latest;
  {
    std::lock_guard lock(metrics_mu_);
    latest = latest_;
  }
  if (absl::Status failure = status(); !failure.ok()) {
    auto failed = std::make_shared<DataLoaderMetricsProto>(*latest);
    failed->set_error(std::string(failure.message()));
    return failed;
  }
  return latest;
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

DataLoaderConfig Pipeline::BatchDefiningConfig() const {
  DataLoaderConfig config = options_;
  config.clear_worker_threads();
  config.clear_metrics_interval_seconds();
  config.clear_use_io_uring();
  config.clear_worker_placement();
  config.clear_trace();
  for (const auto& stage : stage_configs_) *config.add_stage() = *stage;
  for (const std::string& spec : output_specs_) config.add_output(spec);
  ClearParallelism(config);
  return config;
}

absl::StatusOr<LoaderCheckpoint> Pipeline::Checkpoint() {
  if (state_ != State::kRunning) {
    return absl::FailedPreconditionError(
        "checkpoint: the pipeline is not running");
  }
  if (!Resumable()) {
    return absl::FailedPreconditionError(
        "checkpoint: needs DataLoaderConfig.deterministic: true (a resume "
        "gives exactly the batches that would have followed) or resumable: "
        "true (a resume repeats and loses nothing)");
  }
  if (absl::Status failure = status(); !failure.ok()) return failure;
  if (outputs_.size() != 1 || outputs_.front().owner == nullptr) {
    return absl::FailedPreconditionError(
        "checkpoint: needs a pipeline with exactly one output");
  }
  const auto began = std::chrono::steady_clock::now();
  // Stages acknowledging their input on their own would otherwise trim
  // logs that the stages upstream have yet to save.
  const std::unique_lock gate(checkpoint_gate_);
  LoaderCheckpoint checkpoint;
  checkpoint.set_format(kCheckpointFormat);
  *checkpoint.mutable_config() = BatchDefiningConfig();
  checkpoint.set_batches(delivered_.load());
  std::optional<ResumeRequest> request =
      ResumeRequest{.from = checkpoint.batches() - resumed_at_};
  for (Stage* stage = outputs_.front().owner; request.has_value();
       stage = stage->upstream()) {
    if (stage == nullptr) {
      return absl::UnimplementedError(
          "checkpoint: the first stage of the chain needs its input "
          "replayed but has none");
    }
    StageCheckpoint& saved = *checkpoint.add_stage();
    saved.set_name(stage->name());
    SLUICE_ASSIGN_OR_RETURN(
        request, stage->SaveCheckpoint(*request, saved.mutable_state()));
  }
  if (trace_ != nullptr) {
    trace_->RecordCheckpoint(checkpoint.batches(), began,
                             std::chrono::steady_clock::now());
  }
  return checkpoint;
}

absl::Status Pipeline::Resume(const LoaderCheckpoint& checkpoint) {
  if (state_ != State::kConfiguring) {
    return absl::FailedPreconditionError(
        "resume: the pipeline is already started; resume before Start()");
  }
  if (checkpoint.format() != kCheckpointFormat) {
    return absl::InvalidArgumentError(absl::StrCat(
        "resume: the checkpoint is in format ", checkpoint.format(),
        " (written by another sluice version); this build reads format ",
        kCheckpointFormat, " only"));
  }
  if (!Resumable()) {
    return absl::FailedPreconditionError(
        "resume: needs DataLoaderConfig.deterministic: true or resumable: "
        "true");
  }
  std::string difference;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&difference);
  if (!differencer.Compare(checkpoint.config(), BatchDefiningConfig())) {
    if (difference.size() > 400) difference.resize(400);
    return absl::InvalidArgumentError(absl::StrCat(
        "resume: the checkpoint was taken with another config (checkpoint "
        "-> this pipeline): ",
        difference));
  }
  for (const StageCheckpoint& saved : checkpoint.stage()) {
    Stage* stage = FindStage(saved.name());
    if (stage == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("resume: the checkpoint names stage '", saved.name(),
                       "', which this pipeline does not have"));
    }
    if (absl::Status restored = stage->RestoreCheckpoint(saved.state());
        !restored.ok()) {
      return absl::Status(restored.code(),
                          absl::StrCat("resume: stage '", saved.name(),
                                       "': ", restored.message()));
    }
  }
  delivered_.store(checkpoint.batches());
  resumed_at_ = checkpoint.batches();
  return absl::OkStatus();
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
