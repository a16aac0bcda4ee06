// ParallelismGate: lets a stage change how many of its workers take work
// while it runs, without spawning or ending coroutines. The stage spawns
// cap() workers, numbered 0..cap()-1; worker i takes an item only while
// i < limit(). The autotuner (engine/autotuner.h) moves the limit.
//
//   // in the stage's constructor (Stage::AddParallelismGate owns it):
//   gate_ = AddParallelismGate(config.parallelism(),
//                              context.MaxParallelism(config.parallelism()));
//   // Start(): SpawnWorkers(runtime, gate_->cap(), ...); each worker i:
//   while (true) {
//     if (!gate_->Admits(i) && !co_await gate_->Wait(i, load_meter())) break;
//     ... receive one item, work, send ...
//   }
//   gate_->Close();  // the input ended: the parked workers return too
//
// Promises:
// - Admits(i) never suspends or locks: one atomic load, for every item.
// - Wait(i) suspends while i >= limit() and the gate is open; it returns
//   true once i < limit(), false once the gate is closed (Close or the
//   stage's Stop). While parked the worker does not count as alive in
//   `meter` (engine/load_meter.h), so a stage's load is that of its active
//   workers. It resumes on the waiting coroutine's executor.
// - SetLimit (any thread) takes effect at each worker's next item: a
//   raised limit wakes the parked workers it admits; a lowered one parks
//   workers once they finish their item.
#ifndef SLUICE_ENGINE_PARALLELISM_GATE_H_
#define SLUICE_ENGINE_PARALLELISM_GATE_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "asio/awaitable.hpp"
#include "engine/channel.h"
#include "engine/load_meter.h"

namespace sluice {

class ParallelismGate {
 public:
  // `limit` is clamped to [1, cap]; `cap` at least 1.
  ParallelismGate(size_t limit, size_t cap)
      : cap_(std::max<size_t>(cap, 1)),
        limit_(std::clamp<size_t>(limit, 1, cap_)) {
    for (size_t i = 0; i < cap_; ++i) {
      wakeups_.push_back(std::make_unique<Channel<bool>>("wakeup", 1));
    }
  }

  // The workers the stage spawns.
  size_t cap() const { return cap_; }
  // The workers that take work now.
  size_t limit() const { return limit_.load(std::memory_order_relaxed); }

  // True when worker `index` may take an item now.
  bool Admits(size_t index) const {
    return index < limit_.load(std::memory_order_relaxed);
  }

  // See the file comment.
  asio::awaitable<bool> Wait(size_t index, LoadMeter* meter) {
    if (meter != nullptr) meter->WorkerFinished();
    bool admitted = true;
    while (!Admits(index)) {
      std::optional<bool> wakeup = co_await wakeups_[index]->Receive();
      if (!wakeup) {
        admitted = false;
        break;
      }
    }
    if (meter != nullptr) meter->WorkerStarted();
    co_return admitted;
  }

  // Sets the limit, clamped to [1, cap()]; see the file comment.
  void SetLimit(size_t limit) {
    limit = std::clamp<size_t>(limit, 1, cap_);
    limit_.store(limit, std::memory_order_relaxed);
    for (size_t i = 0; i < limit; ++i) {
      bool wakeup = true;
      wakeups_[i]->TrySend(wakeup);  // a full channel already wakes it
    }
  }

  // Every parked and later Wait returns false. Idempotent, any thread.
  void Close() {
    for (const auto& wakeup : wakeups_) wakeup->Close();
  }

 private:
  const size_t cap_;
  std::atomic<size_t> limit_;
  // One per worker: a parked worker waits on its own.
  std::vector<std::unique_ptr<Channel<bool>>> wakeups_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_PARALLELISM_GATE_H_
