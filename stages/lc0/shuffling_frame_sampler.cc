#include "stages/lc0/shuffling_frame_sampler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "asio/post.hpp"
#include "asio/this_coro.hpp"
#include "asio/use_awaitable.hpp"
#include "engine/status_macros.h"

namespace sluice::lc0 {
namespace {

// Frames handled between two yields to the executor, so that a sampler
// whose channel operations never suspend cannot monopolise a thread.
constexpr uint64_t kFramesPerYield = 4096;
// Frames taken from the input channel at once (one lock for all).
constexpr size_t kFramesPerReceive = 64;
// The reservoir's vector grows on demand beyond this many slots, so that a
// large reservoir_size costs nothing until frames arrive.
constexpr uint64_t kMaxReserve = 1 << 16;

// Lets other coroutines of the executor run.
asio::awaitable<void> Yield() {
  co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> ShufflingFrameSampler::Create(
    const StageContext& context) {
  const ShufflingFrameSamplerConfig& config =
      context.config().shuffling_frame_sampler();
  if (config.reservoir_size() == 0) {
    return context.FieldError("reservoir_size", "must be at least 1");
  }
  const uint64_t min_fill =
      config.has_min_fill() ? config.min_fill() : config.reservoir_size();
  if (min_fill > config.reservoir_size()) {
    return context.FieldError(
        "min_fill",
        absl::StrCat("is ", min_fill, " but must be at most reservoir_size (",
                     config.reservoir_size(), ")"));
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Frame> * input, context.SingleInput<Frame>());
  return std::unique_ptr<Stage>(new ShufflingFrameSampler(
      context, config.reservoir_size(), min_fill, input));
}

ShufflingFrameSampler::ShufflingFrameSampler(const StageContext& context,
                                             uint64_t reservoir_size,
                                             uint64_t min_fill,
                                             Channel<Frame>* input)
    : Stage(context),
      reservoir_size_(reservoir_size),
      min_fill_(min_fill),
      input_(input),
      output_(AddOutput<Frame>("output", 256)),
      random_(HashCombine(context.seed(), Fnv1a64(context.name()))) {
  reservoir_.reserve(std::min(reservoir_size, kMaxReserve));
}

void ShufflingFrameSampler::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, 1, [this](int) { return Run(); });
}

Frame ShufflingFrameSampler::TakeSlot(size_t slot) {
  Frame frame = std::move(reservoir_[slot]);
  if (slot + 1 != reservoir_.size())
    reservoir_[slot] = std::move(reservoir_.back());
  reservoir_.pop_back();
  return frame;
}

void ShufflingFrameSampler::UpdateFill() {
  fill_.store(reservoir_.size(), std::memory_order_relaxed);
}

void ShufflingFrameSampler::EmitWhileRoom() {
  while (reservoir_.size() > min_fill_) {
    const size_t slot = random_.Below(reservoir_.size());
    if (!output_->TrySend(reservoir_[slot])) return;  // full (or cancelled)
    TakeSlot(slot);                                   // moved from by TrySend
    emitted_.fetch_add(1, std::memory_order_relaxed);
  }
}

asio::awaitable<void> ShufflingFrameSampler::Run() {
  uint64_t handled = 0;
  std::vector<Frame> incoming;
  incoming.reserve(kFramesPerReceive);
  while (
      co_await input_->ReceiveSome(incoming, kFramesPerReceive, load_meter())) {
    received_.fetch_add(incoming.size(), std::memory_order_relaxed);
    for (Frame& frame : incoming) {
      if (reservoir_.size() < reservoir_size_) {
        reservoir_.push_back(std::move(frame));
      } else {
        std::swap(frame, reservoir_[random_.Below(reservoir_.size())]);
        if (!co_await output_->Send(std::move(frame), load_meter())) co_return;
        emitted_.fetch_add(1, std::memory_order_relaxed);
      }
      // Per frame, so that with min_fill 0 a frame passes straight through.
      EmitWhileRoom();
    }
    handled += incoming.size();
    incoming.clear();
    UpdateFill();
    if (output_->IsClosed()) co_return;  // cancelled by Stop()
    if (handled >= kFramesPerYield) {
      handled = 0;
      co_await Yield();
    }
  }
  // The input ended: drain the reservoir in random order.
  while (!reservoir_.empty()) {
    Frame frame = TakeSlot(random_.Below(reservoir_.size()));
    UpdateFill();
    if (!co_await output_->Send(std::move(frame), load_meter())) co_return;
    emitted_.fetch_add(1, std::memory_order_relaxed);
    if (++handled % kFramesPerYield == 0) co_await Yield();
  }
}

void ShufflingFrameSampler::AddMetrics(StageMetricProto& metrics) {
  ShufflingFrameSamplerMetricsProto* sampler =
      metrics.mutable_shuffling_frame_sampler();
  sampler->set_capacity(reservoir_size_);
  sampler->set_fill(fill_.load(std::memory_order_relaxed));
  sampler->set_frames_received(
      received_.exchange(0, std::memory_order_relaxed));
  sampler->set_frames_emitted(emitted_.exchange(0, std::memory_order_relaxed));
}

}  // namespace sluice::lc0
