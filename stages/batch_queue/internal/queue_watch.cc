#include "stages/batch_queue/internal/queue_watch.h"

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <utility>

#include "engine/log.h"

namespace sluice::batch_queue {

void QueueWatch::Start(const StageRuntime& runtime,
                       const std::string& stage_name) {
  std::lock_guard lock(mu_);
  if (stopped_) return;
  const char* disabled = std::getenv("SLUICE_DISABLE_INOTIFY");
  absl::StatusOr<std::unique_ptr<io::InotifyWatcher>> watcher =
      disabled != nullptr && std::string_view(disabled) == "1"
          ? absl::UnavailableError("disabled by SLUICE_DISABLE_INOTIFY=1")
          : io::InotifyWatcher::Create(runtime.executor->get());
  if (!watcher.ok()) {
    LogWarning("stage ", stage_name, ": no inotify (",
               watcher.status().ToString(), "), polling the queue");
    return;
  }
  watcher_ = *std::move(watcher);
  watching_ = true;
  runtime.tasks->Spawn(stage_name, Pump());
}

bool QueueWatch::Watch(const std::string& directory) {
  if (!watching_ || watched_.contains(directory)) return false;
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) return false;
  if (!watcher_->AddWatch(directory, mask_).ok()) return false;
  watched_.insert(directory);
  return true;
}

asio::awaitable<void> QueueWatch::WaitForChange(
    std::chrono::milliseconds poll_interval) {
  co_await wake_.WaitFor(poll_interval);
}

void QueueWatch::Stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    if (watcher_ != nullptr) watcher_->Cancel();
  }
  wake_.Notify();
}

asio::awaitable<void> QueueWatch::Pump() {
  while (true) {
    absl::StatusOr<std::vector<io::InotifyWatcher::Event>> events =
        co_await watcher_->Read();
    if (!events.ok()) {
      if (!absl::IsCancelled(events.status())) {
        LogWarning("queue watch failed (", events.status().ToString(),
                   "), polling the queue");
      }
      watching_ = false;
      co_return;
    }
    wake_.Notify();
  }
}

}  // namespace sluice::batch_queue
