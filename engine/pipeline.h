// Pipeline: builds a graph of stages from StageConfigs (through a factory),
// runs them on one Executor, publishes metrics and fans out control
// messages. Every error is a Status value; DataLoader (data_loader.h) is the
// throwing facade over it.
//
//   Pipeline pipeline(CreateStage);
//   SLUICE_RETURN_IF_ERROR(pipeline.Configure(config));
//   SLUICE_RETURN_IF_ERROR(pipeline.Start());
//   auto next = pipeline.GetNextFor<TensorBatch>("", std::chrono::seconds(1));
//   pipeline.Stop();
//
// Threading: Configure/AddStage/AddOutput/Start/Stop from one controlling
// thread; GetNextFor, GetMetrics and SendControlMessage from any threads
// that are not executor threads.
#ifndef SLUICE_ENGINE_PIPELINE_H_
#define SLUICE_ENGINE_PIPELINE_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/abort_signal.h"
#include "engine/autotuner.h"
#include "engine/channel.h"
#include "engine/element_type.h"
#include "engine/executor.h"
#include "engine/memory_model.h"
#include "engine/metrics_history.h"
#include "engine/prometheus_metrics.h"
#include "engine/stage.h"
#include "engine/stage_context.h"
#include "engine/task_group.h"
#include "engine/trace_recorder.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"
#include "proto/loader_checkpoint.pb.h"
#include "proto/stage_control.pb.h"

namespace sluice {

class MetricsExporter;

// The bytes of `checkpoint`, with its digest set.
std::string SerializeCheckpoint(LoaderCheckpoint checkpoint);
// The checkpoint in `bytes`; InvalidArgument when they do not parse or
// their digest does not match (damaged, truncated or not a checkpoint).
absl::StatusOr<LoaderCheckpoint> ParseCheckpoint(std::string_view bytes);

// The executor's worker placement for a config's `worker_placement`.
WorkerPlacement PlacementOf(DataLoaderConfig::WorkerPlacement placement);

// Builds one stage from its context (see stages/stage_factory.h).
using StageFactory = std::function<absl::StatusOr<std::unique_ptr<Stage>>(
    const StageContext& context)>;

class Pipeline {
 public:
  explicit Pipeline(StageFactory factory);
  // Stops the pipeline if it is running.
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Takes the options (threads, seed, metrics interval, io_uring) and adds
  // every stage and output of `config`, in order.
  absl::Status Configure(const DataLoaderConfig& config);
  // Builds one stage and wires its inputs to stages added before it.
  absl::Status AddStage(const StageConfig& config);
  // Exposes an output to GetNextFor: "alias:stage.output", alias and
  // ".output" optional (the alias defaults to the reference text).
  absl::Status AddOutput(std::string_view spec);

  // Starts the executor and every stage. Fails if already started, or when
  // there is nothing to run.
  absl::Status Start();
  // Aborts every stage, waits for their coroutines, takes a last metrics
  // snapshot and stops the executor. Idempotent; returns in well under a
  // second for a healthy pipeline.
  void Stop();

  // Waits up to `timeout` for the next item of output `alias` ("" is the
  // first output). An error if the pipeline failed (the failing stage's
  // message), if the alias names nothing or if T is not its element type.
  template <typename T>
  absl::StatusOr<typename Channel<T>::GetResult> GetNextFor(
      std::string_view alias, std::chrono::nanoseconds timeout) {
    absl::StatusOr<ChannelBase*> output = FindOutput(alias);
    if (!output.ok()) return output.status();
    if ((*output)->element_type() != std::type_index(typeid(T))) {
      return absl::InvalidArgumentError(
          absl::StrCat("output '", std::string(alias), "' carries ",
                       std::string((*output)->element_type_name()), ", not ",
                       std::string(ElementTypeName<T>())));
    }
    if (absl::Status failure = status(); !failure.ok()) return failure;
    const auto asked_at = trace_ != nullptr
                              ? std::chrono::steady_clock::now()
                              : std::chrono::steady_clock::time_point();
    typename Channel<T>::GetResult result =
        static_cast<Channel<T>*>(*output)->Get(timeout);
    if (result.kind == Channel<T>::GetResult::Kind::kItem) {
      Delivered(*output, asked_at);
    }
    if (result.kind != Channel<T>::GetResult::Kind::kItem) {
      // An output ends early when the pipeline fails: report the failure.
      if (absl::Status failure = status(); !failure.ok()) return failure;
    }
    return result;
  }

  // Checkpoints (deterministic mode only; docs/guarantees.md). Taken
  // between two batches of the first output, from the thread that gets
  // them: the state of every stage from the output up to the one that
  // re-reads its sources, as references (engine/checkpoint.h), with the
  // config. FailedPrecondition when not running or not deterministic;
  // Unimplemented naming a stage that cannot be checkpointed.
  absl::StatusOr<LoaderCheckpoint> Checkpoint();
  // After Configure, before Start: continue from `checkpoint`. Refused
  // (nothing started) when its format is unknown, when it was taken with
  // another config (the error names the first difference) or names a stage
  // this pipeline does not have.
  absl::Status Resume(const LoaderCheckpoint& checkpoint);
  // After Configure, before Start: continue from the checkpoints that every
  // rank of one run took at the same step (one per rank, in any order).
  // With as many as this pipeline's world_size, this rank resumes from its
  // own as above; with another number, the old ranks' states are merged and
  // this rank takes its share (an elastic resume, engine/checkpoint.h),
  // computed alone: the ranks need not talk. Refused (nothing started) as
  // above, and when the checkpoints are not every rank of one run: a
  // config that differs beyond rank and world_size (the error names the
  // checkpoint and the first difference), a rank given twice or missing,
  // or a stage that cannot merge its ranks' states (named).
  absl::Status Resume(const std::vector<LoaderCheckpoint>& checkpoints);
  // Items handed out by the first output so far (counting those handed
  // out before the checkpoint this run resumed from).
  uint64_t delivered() const { return delivered_.load(); }

  // Waits up to `timeout` for the next item of the first output and drops
  // it (for runners that only count batches); counted like GetNextFor.
  ChannelBase::TakeResult TakeAndDiscard(std::chrono::nanoseconds timeout);

  // The latest metrics snapshot (taken every metrics interval, and at Stop).
  DataLoaderMetricsProto GetMetrics();
  // Every snapshot since Start(), downsampled to a bounded series
  // (engine/metrics_history.h).
  std::vector<MetricsHistory::Sample> GetHistory();
  // OK, or why the trace (DataLoaderConfig.trace) could not be written
  // when the pipeline stopped (the error is also logged).
  absl::Status trace_status() const;
  // Sends `request` to every stage; returns the non-empty answers.
  std::vector<StageControlResponse> SendControlMessage(
      const StageControlRequest& request);

  // OK, or the error that failed the pipeline.
  absl::Status status() const;
  // The output channel called `alias` ("" is the first output).
  absl::StatusOr<ChannelBase*> FindOutput(std::string_view alias) const;
  // Executor in use once started (nullptr before).
  Executor* executor() { return executor_.get(); }
  // The port the Prometheus exporter listens on while the pipeline runs
  // (DataLoaderConfig.metrics_port); 0 when there is none.
  uint16_t metrics_port() const;

 private:
  struct Output {
    std::string alias;
    ChannelBase* channel;
    Stage* owner;
  };
  enum class State { kConfiguring, kRunning, kStopped };

  // Adds every stage and output of `config`, in order.
  absl::Status AddStagesAndOutputs(const DataLoaderConfig& config);
  // The memory model of the stages built (engine/memory_model.h).
  MemoryModel BuildMemoryModel() const;
  // The worker threads the executor runs (worker_threads, or one per
  // allowed CPU).
  unsigned Threads() const;
  // StageContext::MaxParallelism's bound: 0 without autotune.
  uint32_t MaxTunedParallelism() const;
  // With autotune, before the stages start: the settings the tuner may
  // raise and the tuner (engine/pipeline_autotune.cc).
  void SetUpAutotune();
  // Measures the tuned settings every kAutotuneTick and applies the tuner's
  // changes, until it settles or the pipeline stops.
  asio::awaitable<void> AutotuneLoop();
  // Plans `config` for its memory_budget_bytes (engine/memory_budget.h):
  // refuses a budget below the minimum, rebuilds the stages from the
  // planned config when the plan lowers a setting, and keeps the plan for
  // the metrics.
  absl::Status FitMemoryBudget(const DataLoaderConfig& config);
  absl::StatusOr<ChannelBase*> ResolveReference(std::string_view reference,
                                                std::string_view who) const;
  Stage* FindStage(std::string_view name) const;
  // StageContext::consumer_types() of every stage of `config`, by stage
  // name.
  static std::map<std::string, std::vector<std::string>, std::less<>>
  ConsumerTypes(const DataLoaderConfig& config);
  // The stage that owns output channel `channel` (nullptr if none).
  Stage* OwnerOf(const ChannelBase* channel) const;
  // Counts an item handed out by `channel` (asked for at `asked_at`, for
  // the trace) and acknowledges it upstream.
  void Delivered(const ChannelBase* channel,
                 std::chrono::steady_clock::time_point asked_at);
  // With a trace: registers the stages, channels and outputs, and starts
  // recording.
  void StartTrace();
  // Samples every output channel's fill into the trace until the abort.
  asio::awaitable<void> TraceFillLoop();
  // Stops recording and writes the trace file (once).
  void WriteTrace();
  // The config the pipeline was built from, less the options that do not
  // change its batches in deterministic mode (threads, metrics interval,
  // io_uring, every *parallelism field).
  DataLoaderConfig BatchDefiningConfig() const;
  // Merges the states of every rank's checkpoint (`checkpoints`, by old
  // rank, already checked to be one run's) into this rank's.
  absl::Status ResumeElastic(const std::vector<LoaderCheckpoint>& checkpoints);
  // OK when a resume may begin: not started yet, and Resumable().
  absl::Status CheckCanResume() const;
  // Checkpoints can be taken: deterministic or resumable.
  bool Resumable() const {
    return options_.deterministic() || options_.resumable();
  }
  void Fail(const std::string& owner, std::exception_ptr error);
  void AbortAll();
  asio::awaitable<void> MetricsLoop();
  void TakeSnapshot();
  // Which channel each stage reads and the loader hands out, by name.
  PipelineWiring Wiring() const;
  // The latest snapshot without taking one, its error set if the pipeline
  // failed (for the exporter's thread).
  std::shared_ptr<const DataLoaderMetricsProto> LatestSnapshot();

  const StageFactory factory_;
  DataLoaderConfig options_;  // options only; stages are kept in stages_
  State state_ = State::kConfiguring;

  // Declared before the stages, so destroyed after them: a stage may own
  // asio objects of the executor's io_context.
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<TaskGroup> tasks_;
  AbortSignal abort_;

  std::vector<std::unique_ptr<Stage>> stages_;
  std::vector<std::unique_ptr<StageConfig>> stage_configs_;
  // While Configure adds the stages: who takes each one's outputs.
  std::map<std::string, std::vector<std::string>, std::less<>> consumer_types_;
  std::vector<Output> outputs_;
  std::vector<std::string> output_specs_;
  std::atomic<uint64_t> delivered_{0};
  // Held by Checkpoint() while it walks the stages; shared by
  // acknowledgements (Stage::AcknowledgeUpstream).
  std::shared_mutex checkpoint_gate_;
  // Batches handed out before the checkpoint this run resumed from; stages
  // count the items of this run only.
  uint64_t resumed_at_ = 0;

  mutable std::mutex failure_mu_;
  absl::Status failure_;

  // Set by Configure when DataLoaderConfig.trace is; kept until the
  // pipeline is destroyed (callers may still be in GetNextFor).
  std::unique_ptr<TraceRecorder> trace_;

  // With autotune: the tuner and, for each of its settings, what applies
  // it (a stage's gate or an output channel).
  struct Tuned {
    Stage* stage = nullptr;
    ParallelismGate* gate = nullptr;
    ChannelBase* channel = nullptr;
  };
  std::unique_ptr<Autotuner> autotuner_;
  std::vector<Tuned> tuned_;
  // The output channels whose fill the trace samples, with their tracks.
  std::vector<std::pair<ChannelBase*, uint32_t>> traced_channels_;
  // Items handed out by each output, for the trace.
  std::unique_ptr<std::atomic<uint64_t>[]> handed_out_;
  bool trace_written_ = false;
  mutable std::mutex trace_mu_;
  absl::Status trace_status_;

  std::mutex metrics_mu_;
  std::chrono::steady_clock::time_point started_at_;
  std::chrono::steady_clock::time_point last_snapshot_at_;
  // Replaced whole by each snapshot, so that readers share it without
  // copying under the lock.
  std::shared_ptr<const DataLoaderMetricsProto> latest_ =
      std::make_shared<const DataLoaderMetricsProto>();
  bool has_snapshot_ = false;
  std::vector<StageMetricProto> totals_;
  // The memory budget's plan (set by Configure with a budget).
  std::optional<MemoryBudgetMetricsProto> memory_plan_;
  // With autotune: the tuner's latest state, for the snapshots.
  std::optional<AutotuneMetricsProto> autotune_metrics_;
  MetricsHistory history_;

  // Serves the latest snapshot to Prometheus (metrics_port); destroyed
  // first, as it reads the members above.
  std::unique_ptr<MetricsExporter> metrics_exporter_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_PIPELINE_H_
