// QueueWatch: wakes a batch-queue stage as soon as one of its directories
// changes (inotify awaited on the event loop), so the stage re-scans at once
// instead of at its next poll. Where inotify is unavailable (or a directory
// cannot be watched, or SLUICE_DISABLE_INOTIFY=1 is set) the stage still
// re-scans every poll interval.
//
//   QueueWatch watch(IN_MOVED_TO | IN_CLOSE_WRITE);
//   watch.Start(runtime, name());           // in Stage::Start
//   while (!Scan(dir)) {
//     if (watch.Watch(dir)) continue;       // newly watched: scan again
//     co_await watch.WaitForChange(poll);   // event, timeout or Stop()
//     if (abort_signal().aborted()) co_return;
//   }
//   watch.Stop();                           // in Stop() and when done
//
// Promises: WaitForChange returns early on a watched event and at once after
// Stop(); Stop() ends the event pump (which Start() spawned into the
// pipeline's task group), so the pipeline can finish. One waiter at a time.
#ifndef SLUICE_STAGES_BATCH_QUEUE_INTERNAL_QUEUE_WATCH_H_
#define SLUICE_STAGES_BATCH_QUEUE_INTERNAL_QUEUE_WATCH_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "asio/awaitable.hpp"
#include "engine/stage.h"
#include "engine/wake_signal.h"
#include "io/inotify_watcher.h"

namespace sluice::batch_queue {

class QueueWatch {
 public:
  // Watches for the inotify events in `mask` (IN_*).
  explicit QueueWatch(uint32_t mask) : mask_(mask) {}

  // Sets up inotify and spawns the event pump; when inotify is unavailable,
  // logs it once (naming `stage_name`) and the stage only polls.
  void Start(const StageRuntime& runtime, const std::string& stage_name);

  // Watches `directory` when it exists and is not watched yet; a directory
  // that cannot be watched is left to polling. True when a watch was added
  // now: the caller must re-scan before waiting (events from before the
  // watch are not reported). Call from the waiting coroutine.
  bool Watch(const std::string& directory);

  // Suspends until a watched event, `poll_interval`, or Stop().
  asio::awaitable<void> WaitForChange(std::chrono::milliseconds poll_interval);

  // Ends the pump and wakes the waiter. Thread-safe, idempotent.
  void Stop();

  // True while events are being watched (inotify set up and not failed).
  bool watching() const { return watching_.load(); }

 private:
  asio::awaitable<void> Pump();

  const uint32_t mask_;
  WakeSignal wake_;
  std::mutex mu_;  // orders Start() against Stop()
  bool stopped_ = false;
  // Set by Start() (when inotify works) and kept until destruction: the
  // pump may still be reading it after Stop().
  std::unique_ptr<io::InotifyWatcher> watcher_;
  std::atomic<bool> watching_{false};
  std::set<std::string> watched_;
};

}  // namespace sluice::batch_queue

#endif  // SLUICE_STAGES_BATCH_QUEUE_INTERNAL_QUEUE_WATCH_H_
