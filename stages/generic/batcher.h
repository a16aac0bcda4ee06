// Batcher: assembles examples into batches of named typed tensors, for any
// workload. Input: Example, or ExampleBlock (runs of examples column by
// column, e.g. from arrow_source's ROW_BLOCKS output); output "output":
// TypedBatch.
//
//   stage {
//     name: "batcher"  input: "shuffle"
//     batcher {
//       batch_size: 256
//       field { name: "spectrogram" dtype: "float32" shape: [ 80, 3000 ] }
//       field { name: "label" dtype: "int64" }  # a scalar: no shape
//       last_batch: PAD_REPEAT
//     }
//   }
//   std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
//   // batch->Find("spectrogram")->shape == {256, 80, 3000}
//
// Promises:
// - Each batch has one tensor per `field`, in the config's order, of shape
//   {batch_size, shape...}, batch-first and row-major; example i's bytes
//   are copied (one memcpy per field) into slot i. Example fields not in
//   the schema are left out. Examples keep the input's order (block input:
//   unless block_order is VIEWS_FIRST, below).
// - Batches live in one 64-byte-aligned buffer each, from a pool of
//   recycled buffers (engine/batch_buffer_pool.h): the buffer goes back when
//   the batch's last owner drops it, so steady state allocates nothing.
// - The output channel holds 8 MiB of batches, at least 4 and at most 8
//   (batches of 1 MiB: 8; of 2 MiB or more: 4), unless the stage's
//   `output { name: "output" capacity: N }` sets it.
// - Block input: the schema is matched once per block (a mismatch skips
//   and counts all its rows, as it would each example); rows are copied a
//   run at a time (one memcpy per field and run). A batch that lies wholly
//   inside one block is not copied at all: its tensors point into the
//   block (often the record batch as read from the file; dtype-aligned,
//   not necessarily 64-byte aligned) and the batch keeps the block's memory
//   alive until its last owner drops it. With `block_order: VIEWS_FIRST`
//   every batch that fits in the rest of a block is such a view, and only
//   the rows left at block ends are gathered and copied (rows may then
//   leave out of the input's order; each still exactly once).
// - An example whose schema field is missing, has another dtype, another
//   shape, or a byte count that does not match its shape is skipped and
//   counted (`missing_field`, `wrong_dtype`, `wrong_shape`, `wrong_size`),
//   and logged at a limited rate naming the stage, the field, what was
//   expected and what was found.
// - When the input ends, a partial last batch is handled by `last_batch`:
//   KEEP emits it with its true size (TypedBatch::Truncate), DROP drops it
//   (counted in `dropped_examples`), PAD_REPEAT fills the missing slots by
//   cycling through that batch's own examples (slot j copies slot j mod n,
//   for the n real ones; counted in `padded_examples`). An empty remainder
//   emits nothing. Then the output closes.
// - Config errors (batch_size 0, no field, an empty or repeated name, an
//   unknown dtype, a negative dimension, a batch too large) fail at build
//   time naming the stage and the field.
// - One coroutine; it yields to the executor after about a batch of work.
//   Stop() ends it at its next channel wait.
// - Checkpoints (deterministic mode): positions downstream are batches
//   emitted in this run; it keeps, per batch not yet acknowledged, how many
//   examples it had taken in up to its last and the last one's
//   StreamCursor, and asks its input to resume right after it, in the unit
//   of the input (a count, or the cursor's group with the items of it
//   taken: arrow_source directly or through map stages); before its first
//   batch, where its own resume started. A partial batch being filled is
//   built again from the input. Block input is resumed by cursor (a block
//   names its first row's, ExampleBlock::origin), so a batch that ends
//   inside a block resumes at the block's next row: blocks checkpoint as
//   examples do. With block_order VIEWS_FIRST the rows held back at block
//   ends (the batch being copied) are saved too, as references in their
//   slot order (BatcherCheckpoint): the input resumes right after the last
//   row taken in and reads the held rows again first; the resumed batcher
//   puts them back in their slots, in the saved order, so the batches that
//   follow are those of the uninterrupted run (on the way the held rows
//   are copied once more, into a staging buffer). A held row that does not
//   come back (its file gone or changed since) is left out, counted
//   (`checkpoint_example_missing`) and warned about. An elastic resume
//   gives the old ranks' held rows round the new ranks (the j-th of them,
//   rank by rank, to new rank j mod M), each new rank's in that order.
//   Block input from a stage that does not resume at a row of a block is
//   refused (Unimplemented, naming the stage).
// - Metrics: batches and examples emitted, padded and dropped examples,
//   batch buffer bytes.
#ifndef SLUICE_STAGES_GENERIC_BATCHER_H_
#define SLUICE_STAGES_GENERIC_BATCHER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/batch_buffer_pool.h"
#include "engine/log.h"
#include "engine/stage.h"
#include "engine/typed_batch.h"
#include "stages/generic/example.h"
#include "stages/generic/example_block.h"

namespace sluice {

class Batcher final : public Stage {
 public:
  // Errors: see the file comment; also an input that is not one channel of
  // Example.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  // Memory (engine/memory_model.h): the queued batches, the one being filled
  // and two the consumer holds (batcher_memory.cc).
  void DescribeMemory(MemoryModelBuilder& builder) const override;
  void PrepareCheckpoints() override;
  void Acknowledge(uint64_t consumed) override;
  absl::StatusOr<std::optional<ResumeRequest>> SaveCheckpoint(
      const ResumeRequest& downstream, std::string* state) override;
  absl::Status RestoreCheckpoint(const std::string& state) override;
  // Elastic resume: passes the request on, asking in addition for this
  // rank's share of the old ranks' held rows (VIEWS_FIRST; ShareOfHeldRows);
  // a batch being filled otherwise is built again from the input.
  absl::StatusOr<std::optional<ElasticRequest>> PlanElasticResume(
      const std::vector<std::string>& states, const ElasticRequest& downstream,
      ElasticResume& resume) override;
  absl::Status FinishElasticResume(const ElasticResume& resume) override;

  // The batch layout, one spec per schema field.
  const std::vector<BatchTensorSpec>& specs() const { return specs_; }
  // The pool the batches' buffers come from and go back to.
  const std::shared_ptr<BatchBufferPool>& buffer_pool() const {
    return buffers_;
  }

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  // Exactly one of `input` and `block_input` is set.
  Batcher(const StageContext& context, const BatcherConfig& config,
          std::vector<BatchTensorSpec> specs, Channel<Example>* input,
          Channel<ExampleBlock>* block_input);
  // Checkpoints: the rows of the batch being filled (block_order
  // VIEWS_FIRST), by reference in slot order. Only appended to (under
  // log_mu_) while that batch fills: a BatchEnd names a prefix of it.
  using HeldRows = std::shared_ptr<std::vector<ItemRef>>;

  asio::awaitable<void> Run();
  asio::awaitable<void> RunBlocks();
  // A resumed VIEWS_FIRST batcher: takes the held rows its input reads
  // again first (origin().restored) and copies them into `open` (its first
  // `filled` slots, their refs in `held`) in the saved order, emitting each
  // batch they fill; rows that do not come back are counted and left out.
  // `next` gets the first block of the stream (nullopt: the input ended).
  // False once stopped.
  asio::awaitable<bool> RestoreHeldRows(std::optional<TypedBatch>& open,
                                        size_t& filled, HeldRows& held,
                                        std::optional<ExampleBlock>& next);
  // Sends a full batch on; false once the output is closed.
  asio::awaitable<bool> Emit(TypedBatch batch);
  // Finds the schema fields of `block` in block_sources_; false (every row
  // counted, logged once) when one is missing or does not match its spec.
  bool MatchBlock(const ExampleBlock& block);
  // Batch_size rows of `block` from row `first`, without a copy.
  TypedBatch ViewOf(const ExampleBlock& block, int64_t first) const;
  // Copies `count` rows of `columns` (one per spec) from row `row` into
  // `batch` from slot `slot`.
  void CopyRows(const TypedBatch& batch, size_t slot,
                const std::vector<const BlockColumn*>& columns, int64_t row,
                size_t count) const;
  // Finds the schema fields of `example` in sources_; false (counted and
  // logged) when one is missing or does not match its spec.
  bool Match(const Example& example);
  // Counts `count` skipped examples and logs one line (rate-limited).
  void Skip(std::string_view reason, const BatchTensorSpec& spec,
            std::string_view problem, uint64_t count = 1);
  // A fresh batch of batch_size slots; throws when no buffer can be had.
  TypedBatch NewBatch();
  // Copies the matched fields (sources_) into slot `slot` of `batch`.
  void CopyInto(const TypedBatch& batch, size_t slot) const;
  // Applies last_batch to a partial batch of `filled` slots; nullopt when
  // nothing is to be emitted.
  std::optional<TypedBatch> FinishPartial(TypedBatch batch, size_t filled);
  // Checkpoints: where a batch ends in this run's input: after `taken`
  // examples, the last of them at `last` (nullopt: before this run's
  // stream), with the first `held` rows of `held_rows` (VIEWS_FIRST) taken
  // in but not yet emitted.
  struct BatchEnd {
    uint64_t taken = 0;
    std::optional<StreamCursor> last;
    std::shared_ptr<const std::vector<ItemRef>> held_rows;
    size_t held = 0;
  };
  // At the input's end: applies last_batch to the open batch of `filled`
  // slots (if any) and sends on what is left, ending at `end`.
  asio::awaitable<void> EmitPartial(std::optional<TypedBatch> open,
                                    size_t filled, BatchEnd end);
  // Checkpoints: notes that the batch about to be emitted ends at `end`.
  void LogBatchEnd(const BatchEnd& end);
  // Checkpoints: appends the refs of `count` rows of `block` from `row` to
  // `held` (made when null), when batches are logged.
  void HoldRows(const ExampleBlock& block, int64_t row, size_t count,
                HeldRows& held);
  // Checkpoints: where the input must resume after `end`, without the
  // held rows.
  ResumeRequest RequestAfter(const BatchEnd& end) const;

  const size_t batch_size_;
  const BatcherConfig::LastBatch last_batch_;
  // block_order VIEWS_FIRST: a batch that fits in the rest of a block is a
  // view even while a copied batch is open.
  const bool views_first_;
  const std::vector<BatchTensorSpec> specs_;
  // The specs' field names, interned: examples' fields match by address.
  const std::vector<FieldName> field_names_;
  Channel<Example>* const input_;
  Channel<ExampleBlock>* const block_input_;
  Channel<TypedBatch>* const output_;
  const std::shared_ptr<BatchBufferPool> buffers_;
  RateLimiter skip_log_limiter_;
  // Touched only by the one coroutine: per schema field, the matched
  // field's bytes and where it was in the last example (fields usually
  // come in the same order).
  std::vector<const std::byte*> sources_;
  std::vector<size_t> position_hints_;
  // Per schema field, the matched column of the current block.
  std::vector<const BlockColumn*> block_sources_;
  // Checkpoints: the end of batch batch_log_base_ + i (of this run) in the
  // input, for the batches not yet acknowledged.
  bool log_batches_ = false;  // set before Start()
  std::mutex log_mu_;
  std::deque<BatchEnd> batch_ends_;
  uint64_t batch_log_base_ = 0;
  // A resume (set before Start()): the held rows to put back first, in slot
  // order, and the items of the input's first group taken in before this
  // run (a cursor input's skip at this run's start).
  std::vector<ItemRef> resume_held_;
  uint32_t resume_skip_ = 0;
  // An elastic resume's share of the old ranks' held rows, between planning
  // and finishing.
  std::vector<OldItemRef> held_share_;
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> examples_{0};
  std::atomic<uint64_t> padded_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_BATCHER_H_
