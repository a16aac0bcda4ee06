// Stage: one named node of a pipeline. A stage owns its output channels,
// reads its inputs (channels of upstream stages), and runs as coroutines
// spawned into the pipeline's TaskGroup.
//
// A stage is built by a static Create(const StageContext&) (see
// stage_context.h and docs/new_stage.md), declares its outputs in its
// constructor with AddOutput<T>(), and in Start() spawns its workers:
//
//   void Start(const StageRuntime& runtime) override {
//     SpawnWorkers(runtime, parallelism_, [this](int) { return Work(); });
//   }
//   asio::awaitable<void> Work() {
//     while (auto item = co_await input_->Receive(load_meter())) {
//       if (!co_await output_->Send(Transform(*item), load_meter())) break;
//     }
//   }
//
// Promises kept by this base:
// - When every worker returns normally, the outputs are closed (graceful:
//   downstream drains them). A worker that throws fails the pipeline.
// - Stop() is the abort: it cancels the outputs and the stage's
//   AbortSignal, so every wait of the stage ends at once. Idempotent,
//   thread-safe, never blocks.
// - FlushMetrics() reports the load, skips by reason and output channel
//   counters since the previous flush, plus the stage's own AddMetrics().
#ifndef SLUICE_ENGINE_STAGE_H_
#define SLUICE_ENGINE_STAGE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "asio/awaitable.hpp"
#include "engine/abort_signal.h"
#include "engine/channel.h"
#include "engine/checkpoint.h"
#include "engine/executor.h"
#include "engine/load_meter.h"
#include "engine/memory_model.h"
#include "engine/ordered_output.h"
#include "engine/parallelism_gate.h"
#include "engine/stage_context.h"
#include "engine/task_group.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"
#include "proto/stage_control.pb.h"

namespace sluice {

// What a stage gets when the pipeline starts: where to run and who owns
// its coroutines.
struct StageRuntime {
  Executor* executor;
  TaskGroup* tasks;
};

class Stage {
 public:
  virtual ~Stage() = default;
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  const std::string& name() const { return name_; }
  // The stage-specific config field that built it, e.g. "pass_through".
  const std::string& type() const { return type_; }

  // Spawns the stage's coroutines; called once by the pipeline.
  virtual void Start(const StageRuntime& runtime) = 0;
  // Aborts the stage (see the file comment).
  virtual void Stop();
  // Metrics since the previous call.
  StageMetricProto FlushMetrics();
  // The output channel called `name`, or nullptr.
  ChannelBase* GetOutput(std::string_view name) const;
  // Output names, in declaration order.
  std::vector<std::string> OutputNames() const;
  // Answers a control request, or returns nullopt when it is not for this
  // stage. Called from the caller's thread: must be thread-safe.
  virtual std::optional<StageControlResponse> Control(
      const StageControlRequest& request);
  // True for a stage that reads only this rank's shard of its data when
  // world_size > 1 (StageContext::rank()).
  virtual bool ShardsByRank() const { return false; }
  // Describes what the stage holds in memory at its configured settings
  // (engine/memory_model.h), between builder.BeginStage and the next
  // stage's: declares the item bytes of every output (builder.AddOutput)
  // and adds its other terms (reservoirs, read-ahead, workers). Called by
  // the pipeline before Start() when the config has a memory budget; must
  // depend on the config alone. Default: every output with items the size
  // of the first input's (a stage that passes items on).
  virtual void DescribeMemory(MemoryModelBuilder& builder) const;
  // Records the stage's busy count and its spans on the worker threads
  // into `trace` as its stage `index`
  // (engine/trace_recorder.h). Called by the pipeline before Start().
  void TraceInto(TraceRecorder* trace, uint32_t index) {
    load_meter_.TraceInto(trace, index);
  }

  // Checkpoints (deterministic mode; engine/checkpoint.h). Stages that keep
  // state between items override the three below; a stage that keeps none
  // passes requests and acknowledgements through.
  //
  // Called by Start() on the stages from the first output upstream when
  // the pipeline can take checkpoints (deterministic, one output), before
  // Start(): from now on keep what SaveCheckpoint needs (logs trimmed by
  // Acknowledge). Stages off that chain keep nothing.
  virtual void PrepareCheckpoints() {}
  // Downstream will never again need the items of this stage's output
  // before `consumed` (in the unit this stage's ResumeRequests use): logs
  // kept for checkpoints may drop them. Called from any thread.
  virtual void Acknowledge(uint64_t consumed) {}
  // The unit of this stage's ResumeRequests and acknowledgements, for the
  // stage below, which must speak it. Default: kItems.
  virtual ResumeUnit resume_unit() const { return ResumeUnit::kItems; }
  // Saves into `state` what the stage holds, such that after
  // RestoreCheckpoint(state) it produces its output again from
  // `downstream.from` on (and first the items of `downstream.restore`);
  // returns what it then needs from its input stage, or nullopt when it
  // needs nothing replayed. Called between two batches from the consumer's
  // thread. Default: Unimplemented, naming the stage.
  virtual absl::StatusOr<std::optional<ResumeRequest>> SaveCheckpoint(
      const ResumeRequest& downstream, std::string* state);
  // Before Start(): continue from a state SaveCheckpoint wrote. Default:
  // Unimplemented, naming the stage.
  virtual absl::Status RestoreCheckpoint(const std::string& state);
  // Elastic resume (engine/checkpoint.h), before Start(): merges the states
  // this stage saved on the N old ranks (`states`, by old rank) into this
  // rank's, given what the merged stage below needs of it; keeps the
  // result for FinishElasticResume and returns what it then needs from its
  // input stage, or nullopt when it ends the walk (it then sets
  // `resume.translate`). Default: Unimplemented, naming the stage.
  virtual absl::StatusOr<std::optional<ElasticRequest>> PlanElasticResume(
      const std::vector<std::string>& states, const ElasticRequest& downstream,
      ElasticResume& resume);
  // After every stage of the chain planned: restores the merged state.
  // Default: nothing.
  virtual absl::Status FinishElasticResume(const ElasticResume& resume) {
    return absl::OkStatus();
  }
  // The gate of a stage whose parallelism may change while it runs
  // (engine/parallelism_gate.h; DataLoaderConfig.autotune), or nullptr.
  ParallelismGate* parallelism_gate() const { return gate_.get(); }
  // Busy coroutine-seconds of the stage since it was built
  // (LoadMeter::TotalBusySeconds).
  double TotalBusySeconds() { return load_meter_.TotalBusySeconds(); }
  // Every output channel, in declaration order (for the autotuner).
  std::vector<ChannelBase*> Outputs() const;

  // The stage whose output is this stage's only input (nullptr when it has
  // none or several); set by the pipeline.
  Stage* upstream() const { return upstream_; }
  // Set by the pipeline: the upstream stage, and the gate its checkpoints
  // hold exclusively while they walk the chain (AcknowledgeUpstream).
  void set_upstream(Stage* upstream, std::shared_mutex* checkpoint_gate) {
    upstream_ = upstream;
    checkpoint_gate_ = checkpoint_gate;
  }

 protected:
  explicit Stage(const StageContext& context);

  // Declares an output channel of T. Its capacity and overflow policy come
  // from the StageConfig's `output` entry of that name, when there is one.
  template <typename T>
  Channel<T>* AddOutput(std::string output_name = "output",
                        size_t default_capacity = 16) {
    const QueueConfig settings = OutputSettings(output_name, default_capacity);
    auto channel = std::make_unique<Channel<T>>(
        std::move(output_name), settings.capacity(),
        ToPolicy(settings.overflow_behavior()));
    Channel<T>* raw = channel.get();
    outputs_.push_back(std::move(channel));
    return raw;
  }

  // Spawns `count` workers made by `make_worker(index)`; once all of them
  // have returned normally, closes every output.
  void SpawnWorkers(
      const StageRuntime& runtime, int count,
      const std::function<asio::awaitable<void>(int)>& make_worker);

  // For a stage that acknowledges its input on its own (not as a
  // consequence of its own Acknowledge): upstream()->Acknowledge(consumed),
  // unless a checkpoint is being taken, which may still need those items
  // (it is then dropped; acknowledgements are cumulative, the next one
  // covers it). Never blocks.
  void AcknowledgeUpstream(uint64_t consumed);

  // Stage-specific metrics since the previous call.
  virtual void AddMetrics(StageMetricProto& metrics) {}

  // For a parallel stage in deterministic mode: an OrderedOutput over
  // `output` (one of this stage's outputs) with `window` places, owned by
  // the stage, cancelled by Stop() and reported in its metrics (`reorder`).
  template <typename T>
  OrderedOutput<T>* AddOrderedOutput(Channel<T>* output, size_t window) {
    auto ordered = std::make_unique<OrderedOutput<T>>(output, window);
    OrderedOutput<T>* raw = ordered.get();
    ordered_output_ = std::move(ordered);
    return raw;
  }

  // For a stage whose parallelism is a plain count of workers: a gate
  // admitting `parallelism` of `cap` workers (StageContext::MaxParallelism),
  // owned by the stage and closed by Stop(). The stage spawns cap workers
  // and has worker i take items only while the gate admits it.
  ParallelismGate* AddParallelismGate(size_t parallelism, size_t cap) {
    gate_ = std::make_unique<ParallelismGate>(parallelism, cap);
    return gate_.get();
  }

  // Counts `count` items skipped for `reason` (a snake_case metrics key).
  void CountSkip(std::string_view reason, uint64_t count = 1);

  LoadMeter* load_meter() { return &load_meter_; }
  AbortSignal& abort_signal() { return abort_signal_; }
  void CloseOutputs();

 private:
  static OverflowPolicy ToPolicy(QueueConfig::OverflowBehavior behavior);
  QueueConfig OutputSettings(std::string_view output_name,
                             size_t default_capacity) const;
  asio::awaitable<void> RunWorker(asio::awaitable<void> work);

  const std::string name_;
  const std::string type_;
  const std::vector<QueueConfig> output_settings_;
  std::vector<std::unique_ptr<ChannelBase>> outputs_;
  std::unique_ptr<OrderedOutputBase> ordered_output_;
  std::unique_ptr<ParallelismGate> gate_;
  Stage* upstream_ = nullptr;
  std::shared_mutex* checkpoint_gate_ = nullptr;
  LoadMeter load_meter_;
  AbortSignal abort_signal_;
  std::atomic<int> running_workers_{0};
  std::mutex skips_mu_;
  std::map<std::string, uint64_t, std::less<>> skips_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_STAGE_H_
