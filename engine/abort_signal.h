// AbortSignal: a one-shot "stop now" flag that coroutines can sleep on.
//
//   while (!abort.aborted()) {
//     Poll();
//     if (!co_await abort.SleepFor(std::chrono::milliseconds(100))) break;
//   }
//
// Abort() may be called from any thread, any number of times; every pending
// and later SleepFor then completes at once with false.
#ifndef SLUICE_ENGINE_ABORT_SIGNAL_H_
#define SLUICE_ENGINE_ABORT_SIGNAL_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "asio/any_io_executor.hpp"
#include "asio/awaitable.hpp"

namespace sluice {

class AbortSignal {
 public:
  AbortSignal() = default;
  ~AbortSignal();
  AbortSignal(const AbortSignal&) = delete;
  AbortSignal& operator=(const AbortSignal&) = delete;

  // Sets the flag and wakes every sleeper. Idempotent, thread-safe.
  void Abort();
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

  // Suspends the calling coroutine for `duration` (on its own executor), or
  // until Abort(). Returns true if the full duration passed, false if
  // aborted (at once when already aborted).
  asio::awaitable<bool> SleepFor(std::chrono::nanoseconds duration);

  struct Sleeper;

 private:
  std::atomic<bool> aborted_{false};
  std::mutex mu_;
  std::unordered_set<Sleeper*> sleepers_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_ABORT_SIGNAL_H_
