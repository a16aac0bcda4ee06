// OrderedOutput<T>: lets the parallel workers of a stage hand their results
// on in the order of their inputs, so that the stage's output does not
// depend on which worker finished first (deterministic mode).
//
//   // in the stage's constructor (Stage::AddOrderedOutput owns it):
//   ordered_ = AddOrderedOutput(output_, /*window=*/2 * parallelism);
//   // each worker coroutine:
//   while (co_await ordered_->Reserve(load_meter())) {
//     std::optional<Numbered<Chunk>> chunk =
//         co_await input_->ReceiveNumbered(load_meter());
//     if (!chunk) {
//       ordered_->Release();
//       break;
//     }
//     std::vector<Frame> frames = Unpack(chunk->item);  // may be empty
//     if (!co_await ordered_->Put(chunk->position, std::move(frames),
//                                 load_meter())) {
//       break;
//     }
//   }
//
// Promises:
// - The items Put for position p reach the output after those of every
//   position below p and before those of p + 1. Positions are those of
//   Channel::ReceiveNumbered on the stage's one input: every position from
//   0 on must be Put exactly once (an input that yields nothing Puts an
//   empty vector), or the output stalls at the first one missing.
// - Reserve() takes one of `window` places (call it before receiving the
//   input): it suspends while `window` inputs are received and not yet
//   sent, which bounds what waits here. Put() frees the place once the
//   results are sent; Release() frees it unused (the input had ended).
// - Put() never waits for another worker: results that are not yet due are
//   parked and Put returns at once, so workers keep their inputs in flight.
//   The worker whose results are due sends them and every parked run that
//   follows, suspending only while the output is full. It returns false
//   once the output is closed or cancelled.
// - Cancel() (from Stage::Stop) makes every waiting and later Reserve
//   return false.
// - Metrics (TakeMetrics, any thread): the window, the positions parked now
//   and at most since the start, and how often a Reserve had to wait.
#ifndef SLUICE_ENGINE_ORDERED_OUTPUT_H_
#define SLUICE_ENGINE_ORDERED_OUTPUT_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "asio/awaitable.hpp"
#include "engine/channel.h"
#include "engine/load_meter.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice {

// The face of an OrderedOutput that its stage needs, whatever T is.
class OrderedOutputBase {
 public:
  virtual ~OrderedOutputBase() = default;
  virtual void Cancel() = 0;
  // The reorder metrics; `waits` since the previous call.
  virtual ReorderMetricsProto TakeMetrics() = 0;
};

template <typename T>
class OrderedOutput final : public OrderedOutputBase {
 public:
  // `window` at least 1; `output` outlives this.
  OrderedOutput(Channel<T>* output, size_t window)
      : output_(output), window_(window), places_("reorder_places", window) {
    for (size_t i = 0; i < window; ++i) {
      bool place = true;
      places_.TrySend(place);
    }
  }

  asio::awaitable<bool> Reserve(LoadMeter* meter) {
    std::optional<bool> place = places_.TryReceive();
    if (place) co_return true;
    waits_.fetch_add(1, std::memory_order_relaxed);
    std::optional<bool> awaited = co_await places_.Receive(meter);
    co_return awaited.has_value();
  }

  void Release() { FreePlace(); }

  asio::awaitable<bool> Put(uint64_t position, std::vector<T> items,
                            LoadMeter* meter) {
    std::unique_lock lock(mu_);
    if (failed_) co_return false;
    parked_.emplace(position, std::move(items));
    max_parked_ = std::max<uint64_t>(max_parked_, parked_.size());
    if (sending_) co_return true;  // the sender takes it when it is due
    sending_ = true;
    while (!parked_.empty() && parked_.begin()->first == next_) {
      std::vector<T> run = std::move(parked_.begin()->second);
      parked_.erase(parked_.begin());
      lock.unlock();
      for (T& item : run) {
        if (output_->TrySend(item)) continue;
        if (!co_await output_->Send(std::move(item), meter)) {
          lock.lock();
          failed_ = true;
          sending_ = false;
          co_return false;
        }
      }
      FreePlace();
      lock.lock();
      ++next_;
    }
    sending_ = false;
    co_return true;
  }

  void Cancel() override { places_.Cancel(); }

  ReorderMetricsProto TakeMetrics() override {
    ReorderMetricsProto metrics;
    metrics.set_window(window_);
    {
      std::lock_guard lock(mu_);
      metrics.set_parked(parked_.size());
      metrics.set_parked_max(max_parked_);
    }
    metrics.set_waits(waits_.exchange(0, std::memory_order_relaxed));
    return metrics;
  }

 private:
  void FreePlace() {
    bool place = true;
    places_.TrySend(place);
  }

  Channel<T>* const output_;
  const size_t window_;
  Channel<bool> places_;  // one token per free place
  std::atomic<uint64_t> waits_{0};
  std::mutex mu_;  // guards the members below
  std::map<uint64_t, std::vector<T>> parked_;
  uint64_t next_ = 0;  // the position due next
  uint64_t max_parked_ = 0;
  bool sending_ = false;
  bool failed_ = false;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_ORDERED_OUTPUT_H_
