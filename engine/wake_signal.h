// WakeSignal: lets any thread cut short a coroutine's timed wait, e.g. an
// inotify watcher waking a stage that otherwise re-scans a directory every
// poll interval.
//
//   while (!Scan()) {
//     co_await wake.WaitFor(std::chrono::milliseconds(500));  // or Notify()
//   }
//
// Promises:
// - Notify() ends the pending WaitFor at once; with none pending, the next
//   WaitFor returns at once (notifications do not pile up: one is kept).
// - WaitFor returns true when notified, false when `timeout` passed.
// - One waiter at a time; Notify() may be called from any thread.
#ifndef SLUICE_ENGINE_WAKE_SIGNAL_H_
#define SLUICE_ENGINE_WAKE_SIGNAL_H_

#include <chrono>
#include <mutex>

#include "asio/awaitable.hpp"
#include "asio/steady_timer.hpp"

namespace sluice {

class WakeSignal {
 public:
  WakeSignal() = default;
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;

  // Wakes the waiter (now, or at its next WaitFor). Thread-safe.
  void Notify();

  // Suspends until Notify() or until `timeout` passed; true when notified.
  asio::awaitable<bool> WaitFor(std::chrono::nanoseconds timeout);

 private:
  std::mutex mu_;
  bool notified_ = false;
  // The pending waiter's timer; started and cancelled only under mu_.
  asio::steady_timer* waiting_ = nullptr;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_WAKE_SIGNAL_H_
