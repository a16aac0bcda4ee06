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
      output_(AddOutput<TensorBatch>("output", 4)),
      // Enough free buffers for the batches a consumer and the output
      // channel hold at once, so steady state allocates nothing.
      buffers_(BatchBufferPool::Create(
          TensorBatch::AllocationBytes(config.batch_size()),
          output_->capacity() + config.parallelism() + 2)) {}

void TensorGenerator::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, static_cast<int>(config_.parallelism()),
               [this](int) { return Build(); });
}

asio::awaitable<void> TensorGenerator::Build() {
  const size_t batch_size = config_.batch_size();
  // Each frame's record is unpacked here, then expanded into the batch.
  const auto scratch = std::make_unique_for_overwrite<V6TrainingRecord>();
  // Frames are taken in bulk (one channel lock for many), and each record
  // is prefetched while the one before it is expanded: records come from
  // random reservoir slots, far out of cache.
  std::vector<Frame> frames;
  frames.reserve(kFramesPerReceive);
  bool input_open = true;
  while (input_open) {
    absl::StatusOr<TensorBatch> batch =
        TensorBatch::Create(batch_size, buffers_);
    if (!batch.ok()) throw std::runtime_error(batch.status().ToString());
    size_t filled = 0;
    while (filled < batch_size) {
      frames.clear();
      if (!co_await input_->ReceiveSome(
              frames, std::min(kFramesPerReceive, batch_size - filled),
              load_meter())) {
        input_open = false;
        break;
      }
      frames.front().record.Prefetch();
      for (size_t i = 0; i < frames.size(); ++i) {
        if (i + 1 < frames.size()) frames[i + 1].record.Prefetch();
        const Frame& frame = frames[i];
        if (frame.record.input_format() != expander_.input_format()) {
          CountSkip("unexpected_input_format");
          continue;
        }
        frame.record.Unpack(scratch.get());
        expander_.Expand(*scratch, &*batch, filled);
        batch->set_game_id(filled, frame.game_id);
        ++filled;
      }
    }
    if (filled == 0) break;
    batch->Truncate(filled);
    RecordBatch(*batch);
    if (!co_await output_->Send(std::move(*batch), load_meter())) break;
    // One batch is one slice of CPU work: let other coroutines run.
    co_await asio::post(co_await asio::this_coro::executor,
                        asio::use_awaitable);
  }
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
