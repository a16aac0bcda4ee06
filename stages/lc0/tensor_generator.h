// TensorGenerator: batches frames into the five training tensors (FORMAT.md,
// "The training tuple"), bit for bit as the reference reader. Input:
// lc0::Frame; output "output": TypedBatch (engine/typed_batch.h) of five
// float32 tensors, in this order: planes (B, 112, 8, 8), probs (B, 1858),
// winner (B, 3), best_q (B, 3), plies_left (B); example ids are the games.
//
//   stage {
//     name: "tensors"  input: "sampler"
//     tensor_generator { batch_size: 1024 input_format: 3 }
//   }
//   std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
//
// Promises:
// - Each batch is one 64-byte-aligned allocation (lc0::TensorBatch),
//   written in place and handed downstream as a TypedBatch over the same
//   memory: no copy.
// - Batches hold `batch_size` positions; when the input ends, the last
//   positions go out as one partial batch with its true size, so a finite
//   stream (eval) yields every position exactly once. An empty remainder
//   emits nothing.
// - The `parallelism` coroutines fill one batch together (each claims a run
//   of its slots), so only one batch is being written at a time: few batch
//   buffers take turns, and the next one written is often still in cache.
//   With parallelism 1 the positions keep the input's order. With
//   autotune the tuner may admit more coroutines while it runs
//   (engine/parallelism_gate.h).
// - Deterministic mode (DataLoaderConfig.deterministic): receiving frames
//   and claiming their slots is one turn the coroutines take in order, and
//   batches go out in the order they were opened (engine/ordered_output.h):
//   batch k holds frames [kB, (k+1)B) of the input, in order, whatever the
//   parallelism and the thread count.
// - Frames of another input format than `input_format` are dropped and
//   counted (`unexpected_input_format`).
// - With `v7_fields` each batch also holds q_st, d_st, opp_played_idx and
//   next_played_idx (float32 (B,) each) from V7 records (a rescorer's
//   output_version 7); frames of older records are dropped and counted
//   (`no_v7_fields`).
// - Metrics: batches, positions, and shuffle quality over the last
//   interval's batches: distinct games per batch (mean, min) and the largest
//   number of positions of one game in a batch (mean, max).
// - Stop() ends every coroutine at its next channel wait.
#ifndef SLUICE_STAGES_LC0_TENSOR_GENERATOR_H_
#define SLUICE_STAGES_LC0_TENSOR_GENERATOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/batch_buffer_pool.h"
#include "engine/stage.h"
#include "engine/typed_batch.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/tensor_expansion.h"
#include "stages/lc0/frame.h"

namespace sluice::lc0 {

// Shuffle quality of one batch, from its game ids.
struct BatchQuality {
  uint64_t distinct_games = 0;
  // The largest number of positions of one game.
  uint64_t max_positions_per_game = 0;
};

// The shuffle quality of a batch whose positions come from `game_ids`.
BatchQuality MeasureBatchQuality(std::span<const uint64_t> game_ids);

class TensorGenerator final : public Stage {
 public:
  // Errors: batch_size 0, parallelism 0, an unsupported input_format, an
  // input that is not one channel of Frame.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  // Memory (engine/memory_model.h): the batch being filled (one more per worker
  // in order), the queued batches and two the consumer holds.
  void DescribeMemory(MemoryModelBuilder& builder) const override;
  // Checkpoints (deterministic mode): keeps no state; batch k holds input
  // frames [k * batch_size, (k + 1) * batch_size), so batches downstream
  // become frames upstream. Refused once frames of another input format
  // were dropped (the frames would no longer line up).
  void Acknowledge(uint64_t consumed) override;
  absl::StatusOr<std::optional<ResumeRequest>> SaveCheckpoint(
      const ResumeRequest& downstream, std::string* state) override;
  absl::Status RestoreCheckpoint(const std::string& state) override;
  // Elastic resume: holds nothing, passes the request on.
  absl::StatusOr<std::optional<ElasticRequest>> PlanElasticResume(
      const std::vector<std::string>& states, const ElasticRequest& downstream,
      ElasticResume& resume) override {
    return downstream;
  }
  void Stop() override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  // Shuffle quality summed over the batches since the last flush.
  struct QualityTotals {
    uint64_t batches = 0;
    uint64_t distinct_sum = 0;
    uint64_t distinct_min = 0;
    uint64_t max_positions_sum = 0;
    uint64_t max_positions_max = 0;
  };

  // The batch the coroutines are filling together. Guarded by fill_mu_
  // (the slots themselves are written by the coroutine that claimed them).
  struct SharedBatch {
    explicit SharedBatch(TensorBatch batch) : batch(std::move(batch)) {}
    TensorBatch batch;
    uint64_t number = 0;  // batches opened before this one
    size_t claimed = 0;   // slots handed out
    size_t filled = 0;    // slots written
  };
  // Slots [first, first + count) of `shared`, claimed by one coroutine.
  struct SlotRun {
    std::shared_ptr<SharedBatch> shared;
    size_t first = 0;
    size_t count = 0;
  };

  TensorGenerator(const StageContext& context,
                  const TensorGeneratorConfig& config, TensorExpander expander,
                  Channel<Frame>* input);
  asio::awaitable<void> Build(int index);
  // Drops the frames whose input format is not ours (and, with v7_fields,
  // those without V7 fields), counting them.
  void DropOtherFormats(std::vector<Frame>& frames);
  // Writes the V7 fields of `frame` (a V7 record) into `slot`.
  static void ExpandV7Fields(const Frame& frame, TensorBatch& batch,
                             size_t slot);
  // Claims slots for `count` frames into `runs` (runs of the open batch and
  // of new ones); in deterministic mode (count <= batch_size) a new batch
  // first reserves its place in the ordered output. False once the stage
  // is stopping.
  asio::awaitable<bool> ClaimRuns(size_t count, std::vector<SlotRun>& runs);
  // True when `count` slots are more than the open batch has left.
  bool OpensABatch(size_t count);
  // Hands batch `number` on: in order in deterministic mode. False once the
  // output is closed.
  asio::awaitable<bool> Emit(uint64_t number, TensorBatch batch);
  // Claims up to `wanted` (at least 1) slots of the open batch, opening a
  // new one when there is none. Throws when no buffer can be allocated.
  SlotRun ClaimSlots(size_t wanted);
  // Marks `run` written; returns its batch once every slot of it is.
  std::optional<TensorBatch> FinishSlots(const SlotRun& run);
  // For the last coroutine when the input ended: the open batch, cut to its
  // written slots, if any.
  std::shared_ptr<SharedBatch> TakeRemainder();
  void RecordBatch(const TensorBatch& batch);
  // Frames in the first `batches` batches: batch_size each, but the last
  // batch of a finished input holds only what was left.
  uint64_t FramesIn(uint64_t batches);

  const TensorGeneratorConfig config_;
  const TensorExpander expander_;
  Channel<Frame>* const input_;
  Channel<TypedBatch>* const output_;
  // Deterministic mode: the batches in order, and the turn to receive and
  // claim (a token). Else nullptr.
  OrderedOutput<TypedBatch>* const ordered_;
  ParallelismGate* const gate_;
  Channel<bool> receive_turn_;
  const std::shared_ptr<BatchBufferPool> buffers_;
  std::mutex fill_mu_;
  std::shared_ptr<SharedBatch> open_;  // guarded by fill_mu_
  uint64_t next_batch_number_ = 0;     // guarded by fill_mu_
  int running_ = 0;                    // coroutines; guarded by fill_mu_
  // The input ended: the number of the last batch and its frames (it may
  // be short). Guarded by fill_mu_.
  std::optional<std::pair<uint64_t, size_t>> last_batch_;
  std::mutex mu_;
  QualityTotals quality_;  // guarded by mu_
  std::atomic<uint64_t> positions_{0};
  std::atomic<uint64_t> dropped_formats_{0};
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_TENSOR_GENERATOR_H_
