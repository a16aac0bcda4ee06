#include "stages/lc0/tensor_generator.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "asio/post.hpp"
#include "asio/this_coro.hpp"
#include "asio/use_awaitable.hpp"
#include "engine/status_macros.h"
#include "stages/lc0/format/packed_expander.h"

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
      // Enough free buffers for the batches a consumer and the output
      // channel hold at once, so steady state allocates nothing.
      buffers_(BatchBufferPool::Create(
          TensorBatch::AllocationBytes(config.batch_size()),
          output_->capacity() + config.parallelism() + 2)) {}

void TensorGenerator::Start(const StageRuntime& runtime) {
  {
    std::lock_guard lock(fill_mu_);
    running_ = static_cast<int>(config_.parallelism());
  }
  SpawnWorkers(runtime, static_cast<int>(config_.parallelism()),
               [this](int) { return Build(); });
}

asio::awaitable<void> TensorGenerator::Build() {
  PackedExpander expander(expander_);
  // Frames are taken in bulk: one channel lock for many.
  std::vector<Frame> frames;
  frames.reserve(kFramesPerReceive);
  size_t since_yield = 0;
  bool output_open = true;
  while (output_open && co_await input_->ReceiveSome(frames, kFramesPerReceive,
                                                     load_meter())) {
    // The records come from random reservoir slots, far out of cache: fetch
    // the heads of all of them at once, before the format check reads them.
    for (const Frame& frame : frames) frame.record.Prefetch();
    const size_t dropped = std::erase_if(frames, [this](const Frame& frame) {
      return frame.record.input_format() != expander_.input_format();
    });
    if (dropped > 0) CountSkip("unexpected_input_format", dropped);
    for (size_t next = 0; next < frames.size() && output_open;) {
      const SlotRun run = ClaimSlots(frames.size() - next);
      TensorBatch& batch = run.shared->batch;
      for (size_t slot = run.first; slot < run.first + run.count; ++slot) {
        const Frame& frame = frames[next++];
        expander.Expand(frame.record, &batch, slot);
        batch.set_game_id(slot, frame.game_id);
      }
      if (std::optional<TensorBatch> full = FinishSlots(run)) {
        RecordBatch(*full);
        output_open = co_await output_->Send(std::move(*full).ToTypedBatch(),
                                             load_meter());
      }
    }
    since_yield += frames.size();
    frames.clear();
    // About one batch of CPU work per slice: let other coroutines run.
    if (since_yield >= config_.batch_size()) {
      since_yield = 0;
      co_await asio::post(co_await asio::this_coro::executor,
                          asio::use_awaitable);
    }
  }
  if (std::optional<TensorBatch> remainder = TakeRemainder()) {
    RecordBatch(*remainder);
    co_await output_->Send(std::move(*remainder).ToTypedBatch(), load_meter());
  }
}

TensorGenerator::SlotRun TensorGenerator::ClaimSlots(size_t wanted) {
  const size_t batch_size = config_.batch_size();
  std::lock_guard lock(fill_mu_);
  if (open_ == nullptr) {
    absl::StatusOr<TensorBatch> batch =
        TensorBatch::Create(batch_size, buffers_);
    if (!batch.ok()) throw std::runtime_error(batch.status().ToString());
    open_ = std::make_shared<SharedBatch>(std::move(*batch));
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

std::optional<TensorBatch> TensorGenerator::TakeRemainder() {
  std::lock_guard lock(fill_mu_);
  if (--running_ > 0 || open_ == nullptr) return std::nullopt;
  // Every coroutine has left its loop, so every claimed slot is written.
  const std::shared_ptr<SharedBatch> shared = std::move(open_);
  shared->batch.Truncate(shared->filled);
  return std::move(shared->batch);
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
