#include "stages/lc0/tensor_generator.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/status_macros.h"
#include "engine/yield.h"
#include "stages/lc0/format/packed_expander.h"
#include "stages/lc0/memory_estimates.h"

namespace sluice::lc0 {
namespace {

// Frames taken from the input channel at once.
constexpr size_t kFramesPerReceive = 64;

}  // namespace

BatchQuality MeasureBatchQuality(std::span<const uint64_t> game_ids) {
  std::vector<uint64_t> sorted(game_ids.begin(), game_ids.end());
  std::sort(sorted.begin(), sorted.end());
  BatchQuality quality;
  for (size_t i = 0; i < sorted.size();) {
    size_t end = i + 1;
    while (end < sorted.size() && sorted[end] == sorted[i]) ++end;
    ++quality.distinct_games;
    quality.max_positions_per_game =
        std::max<uint64_t>(quality.max_positions_per_game, end - i);
    i = end;
  }
  return quality;
}

absl::StatusOr<std::unique_ptr<Stage>> TensorGenerator::Create(
    const StageContext& context) {
  const TensorGeneratorConfig& config = context.config().tensor_generator();
  if (config.batch_size() == 0) {
    return context.FieldError("batch_size", "must be at least 1");
  }
  if (config.parallelism() == 0) {
    return context.FieldError("parallelism", "must be at least 1");
  }
  absl::StatusOr<TensorExpander> expander =
      TensorExpander::Create(config.input_format());
  if (!expander.ok()) {
    return context.FieldError("input_format",
                              std::string(expander.status().message()));
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Frame> * input, context.SingleInput<Frame>());
  return std::unique_ptr<Stage>(
      new TensorGenerator(context, config, *expander, input));
}

TensorGenerator::TensorGenerator(const StageContext& context,
                                 const TensorGeneratorConfig& config,
                                 TensorExpander expander, Channel<Frame>* input)
    : Stage(context),
      config_(config),
      expander_(expander),
      input_(input),
      output_(AddOutput<TypedBatch>("output", 4)),
      // A place per batch in flight: one per worker filling slots, plus the
      // open batch the turn holder may need beside a new one (ClaimRuns).
      ordered_(
          context.ordered()
              ? AddOrderedOutput(
                    output_, context.MaxParallelism(config.parallelism()) + 1)
              : nullptr),
      gate_(AddParallelismGate(config.parallelism(),
                               context.MaxParallelism(config.parallelism()))),
      receive_turn_("receive_turn", 1),
      // Enough free buffers for the batches a consumer and the output
      // channel hold at once, so steady state allocates nothing.
      buffers_(BatchBufferPool::Create(
          TensorBatch::AllocationBytes(config.batch_size(), config.v7_fields()),
          output_->capacity() + config.parallelism() + 2)) {}

void TensorGenerator::DescribeMemory(MemoryModelBuilder& builder) const {
  const uint64_t batch = buffers_->bytes();
  builder.AddOutput(output_, "output", batch);
  // The batch being filled (the workers fill one together); in order
  // (deterministic) one more per worker waits to go out.
  builder.Add({.part = "workers",
               .what = "batches being filled",
               .knob = MemoryKnob::kParallelism,
               .field = "parallelism",
               .count = config_.parallelism(),
               .min_count = 1,
               .bytes_each = ordered_ != nullptr ? batch : 0,
               .fixed_bytes = batch});
  builder.Add({.part = "handed out",
               .what = "batches the consumer holds (the one it uses, the "
                       "one it takes next)",
               .count = 2,
               .bytes_each = batch});
}

void TensorGenerator::Start(const StageRuntime& runtime) {
  {
    std::lock_guard lock(fill_mu_);
    running_ = static_cast<int>(gate_->cap());
  }
  bool turn = true;
  receive_turn_.TrySend(turn);
  SpawnWorkers(runtime, static_cast<int>(gate_->cap()),
               [this](int index) { return Build(index); });
}

void TensorGenerator::Stop() {
  Stage::Stop();
  receive_turn_.Cancel();
}

void TensorGenerator::DropOtherFormats(std::vector<Frame>& frames) {
  size_t no_v7 = 0;
  const size_t dropped = std::erase_if(frames, [&](const Frame& frame) {
    if (frame.record.input_format() != expander_.input_format()) return true;
    if (config_.v7_fields() && frame.record.version() != 7) {
      ++no_v7;
      return true;
    }
    return false;
  });
  if (dropped > 0) {
    if (dropped > no_v7) CountSkip("unexpected_input_format", dropped - no_v7);
    if (no_v7 > 0) CountSkip("no_v7_fields", no_v7);
    dropped_formats_.fetch_add(dropped);
  }
}

void TensorGenerator::ExpandV7Fields(const Frame& frame, TensorBatch& batch,
                                     size_t slot) {
  const std::optional<V7Tail> tail = frame.record.v7_tail();
  *batch.v7_field(TensorId::kQSt, slot) = tail->q_st;
  *batch.v7_field(TensorId::kDSt, slot) = tail->d_st;
  *batch.v7_field(TensorId::kOppPlayedIdx, slot) = tail->opp_played_idx;
  *batch.v7_field(TensorId::kNextPlayedIdx, slot) = tail->next_played_idx;
}

void TensorGenerator::Acknowledge(uint64_t consumed) {
  if (upstream() != nullptr) {
    upstream()->Acknowledge(FramesIn(consumed));
  }
}

absl::StatusOr<std::optional<ResumeRequest>> TensorGenerator::SaveCheckpoint(
    const ResumeRequest& downstream, std::string* state) {
  if (const uint64_t dropped = dropped_formats_.load(); dropped > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "stage '", name(), "' dropped ", dropped,
        " frames of another input format or without V7 fields; its batches "
        "no longer line up "
        "with its input, so it cannot be checkpointed"));
  }
  return ResumeRequest{.from = FramesIn(downstream.from)};
}

absl::Status TensorGenerator::RestoreCheckpoint(const std::string& state) {
  return absl::OkStatus();
}

asio::awaitable<void> TensorGenerator::Build(int index) {
  PackedExpander expander(expander_);
  // Frames are taken in bulk: one channel lock for many.
  std::vector<Frame> frames;
  frames.reserve(kFramesPerReceive);
  std::vector<SlotRun> runs;
  // At most a batch at a time in deterministic mode (see ClaimRuns).
  const size_t receive_max =
      ordered_ != nullptr
          ? std::min<size_t>(kFramesPerReceive, config_.batch_size())
          : kFramesPerReceive;
  size_t since_yield = 0;
  bool output_open = true;
  while (output_open) {
    // Workers beyond the tuned parallelism wait here, holding no slot.
    if (!gate_->Admits(index) && !co_await gate_->Wait(index, load_meter())) {
      break;  // the input ended, or Stop()
    }
    // Deterministic mode: receiving and claiming slots are one turn, so
    // the slots follow the input's order.
    if (ordered_ != nullptr) {
      std::optional<bool> turn = co_await receive_turn_.Receive(load_meter());
      if (!turn) break;  // Stop()
    }
    bool received =
        co_await input_->ReceiveSome(frames, receive_max, load_meter());
    if (received) {
      // The records come from random reservoir slots, far out of cache:
      // fetch the heads of all of them at once, before the format check
      // reads them.
      for (const Frame& frame : frames) frame.record.Prefetch();
      DropOtherFormats(frames);
      received = co_await ClaimRuns(frames.size(), runs);
    }
    if (ordered_ != nullptr) {
      bool turn = true;
      receive_turn_.TrySend(turn);
    }
    if (!received) {
      gate_->Close();  // the parked workers leave too
      break;
    }
    size_t next = 0;
    for (const SlotRun& run : runs) {
      TensorBatch& batch = run.shared->batch;
      for (size_t slot = run.first; slot < run.first + run.count; ++slot) {
        const Frame& frame = frames[next++];
        expander.Expand(frame.record, &batch, slot);
        if (config_.v7_fields()) ExpandV7Fields(frame, batch, slot);
        batch.set_game_id(slot, frame.game_id);
      }
      if (std::optional<TensorBatch> full = FinishSlots(run)) {
        output_open = co_await Emit(run.shared->number, std::move(*full));
        if (!output_open) break;
      }
    }
    since_yield += frames.size();
    frames.clear();
    // About one batch of CPU work per slice: let other coroutines run.
    if (since_yield >= config_.batch_size()) {
      since_yield = 0;
      co_await YieldToOtherCoroutines();
    }
  }
  if (std::shared_ptr<SharedBatch> remainder = TakeRemainder()) {
    co_await Emit(remainder->number, std::move(remainder->batch));
  }
}

asio::awaitable<bool> TensorGenerator::ClaimRuns(size_t count,
                                                 std::vector<SlotRun>& runs) {
  runs.clear();
  // In deterministic mode only the turn holder claims, and it takes at most
  // batch_size frames, so at most one batch opens here: its place in the
  // ordered output is reserved first, while this coroutine holds no slot
  // it has not written (the batches before it can all complete).
  if (ordered_ != nullptr && OpensABatch(count) &&
      !co_await ordered_->Reserve(load_meter())) {
    co_return false;
  }
  for (size_t claimed = 0; claimed < count;) {
    runs.push_back(ClaimSlots(count - claimed));
    claimed += runs.back().count;
  }
  co_return true;
}

asio::awaitable<bool> TensorGenerator::Emit(uint64_t number,
                                            TensorBatch batch) {
  RecordBatch(batch);
  if (ordered_ == nullptr) {
    co_return co_await output_->Send(std::move(batch).ToTypedBatch(),
                                     load_meter());
  }
  std::vector<TypedBatch> out;
  out.push_back(std::move(batch).ToTypedBatch());
  co_return co_await ordered_->Put(number, std::move(out), load_meter());
}

bool TensorGenerator::OpensABatch(size_t count) {
  std::lock_guard lock(fill_mu_);
  const size_t room =
      open_ == nullptr ? 0 : config_.batch_size() - open_->claimed;
  return count > room;
}

TensorGenerator::SlotRun TensorGenerator::ClaimSlots(size_t wanted) {
  const size_t batch_size = config_.batch_size();
  std::lock_guard lock(fill_mu_);
  if (open_ == nullptr) {
    absl::StatusOr<TensorBatch> batch =
        TensorBatch::Create(batch_size, buffers_, config_.v7_fields());
    if (!batch.ok()) throw std::runtime_error(batch.status().ToString());
    open_ = std::make_shared<SharedBatch>(std::move(*batch));
    open_->number = next_batch_number_++;
  }
  SlotRun run{.shared = open_,
              .first = open_->claimed,
              .count = std::min(wanted, batch_size - open_->claimed)};
  open_->claimed += run.count;
  if (open_->claimed == batch_size) open_.reset();
  return run;
}

std::optional<TensorBatch> TensorGenerator::FinishSlots(const SlotRun& run) {
  std::lock_guard lock(fill_mu_);
  run.shared->filled += run.count;
  if (run.shared->filled < config_.batch_size()) return std::nullopt;
  return std::move(run.shared->batch);
}

std::shared_ptr<TensorGenerator::SharedBatch> TensorGenerator::TakeRemainder() {
  std::lock_guard lock(fill_mu_);
  if (--running_ > 0 || open_ == nullptr) return nullptr;
  // Every coroutine has left its loop, so every claimed slot is written.
  std::shared_ptr<SharedBatch> shared = std::move(open_);
  shared->batch.Truncate(shared->filled);
  last_batch_.emplace(shared->number, shared->filled);
  return shared;
}

uint64_t TensorGenerator::FramesIn(uint64_t batches) {
  const uint64_t full = batches * config_.batch_size();
  std::lock_guard lock(fill_mu_);
  if (!last_batch_ || last_batch_->first >= batches) return full;
  return full - (config_.batch_size() - last_batch_->second);
}

void TensorGenerator::RecordBatch(const TensorBatch& batch) {
  const BatchQuality quality = MeasureBatchQuality(batch.game_ids());
  positions_.fetch_add(batch.size(), std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  quality_.distinct_min =
      quality_.batches == 0
          ? quality.distinct_games
          : std::min(quality_.distinct_min, quality.distinct_games);
  quality_.max_positions_max =
      std::max(quality_.max_positions_max, quality.max_positions_per_game);
  quality_.distinct_sum += quality.distinct_games;
  quality_.max_positions_sum += quality.max_positions_per_game;
  ++quality_.batches;
}

void TensorGenerator::AddMetrics(StageMetricProto& metrics) {
  QualityTotals quality;
  {
    std::lock_guard lock(mu_);
    quality = std::exchange(quality_, QualityTotals{});
  }
  TensorGeneratorMetricsProto* generator = metrics.mutable_tensor_generator();
  generator->set_batches(quality.batches);
  generator->set_positions(positions_.exchange(0, std::memory_order_relaxed));
  generator->set_batch_buffer_bytes(buffers_->allocated_buffers() *
                                    buffers_->bytes());
  if (quality.batches == 0) return;
  const double batches = static_cast<double>(quality.batches);
  generator->set_distinct_games_mean(quality.distinct_sum / batches);
  generator->set_distinct_games_min(quality.distinct_min);
  generator->set_max_positions_per_game_mean(quality.max_positions_sum /
                                             batches);
  generator->set_max_positions_per_game_max(quality.max_positions_max);
}

}  // namespace sluice::lc0
