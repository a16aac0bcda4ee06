#include "batch_feed.h"

#include <utility>

#include "stop_signal.h"

namespace trainer {

std::optional<sluice::Batch> BatchFeed::Wait() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::optional<sluice::Batch> batch;
  while (!StopSignal::requested()) {
    sluice::NextResult next = loader_.NextFor(kStopPollInterval);
    if (!next.timed_out) {
      batch = std::move(next.batch);
      break;
    }
  }
  last_wait_seconds_ =
      std::chrono::duration<double>(Clock::now() - start).count();
  return batch;
}

std::optional<sluice::Batch> BatchFeed::Next() {
  if (held_.has_value()) {
    last_wait_seconds_ = held_wait_seconds_;
    return std::exchange(held_, std::nullopt);
  }
  return Wait();
}

const sluice::Batch* BatchFeed::Peek() {
  if (!held_.has_value()) {
    held_ = Wait();
    held_wait_seconds_ = last_wait_seconds_;
  }
  return held_.has_value() ? &*held_ : nullptr;
}

}  // namespace trainer
