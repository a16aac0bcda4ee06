// InotifyWatcher: Linux inotify read through an asio stream_descriptor, so a
// coroutine awaits file-system events on the event loop (no thread, no
// blocking read).
//
//   SLUICE_ASSIGN_OR_RETURN(auto watcher, InotifyWatcher::Create(executor));
//   SLUICE_ASSIGN_OR_RETURN(int wd, watcher->AddWatch(dir, IN_CLOSE_WRITE));
//   while (true) {
//     auto events = co_await watcher->Read();  // Cancelled after Cancel()
//     if (!events.ok()) break;
//     for (const InotifyWatcher::Event& event : *events) ...
//   }
#ifndef SLUICE_IO_INOTIFY_WATCHER_H_
#define SLUICE_IO_INOTIFY_WATCHER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asio/any_io_executor.hpp"
#include "asio/awaitable.hpp"
#include "asio/posix/stream_descriptor.hpp"

namespace sluice::io {

class InotifyWatcher {
 public:
  // One inotify event: the watch it belongs to, its IN_* mask and the name
  // of the entry inside the watched directory (empty for events on the
  // directory itself).
  struct Event {
    int wd = -1;
    uint32_t mask = 0;
    std::string name;
  };

  // A non-blocking inotify instance whose reads complete on `executor`.
  static absl::StatusOr<std::unique_ptr<InotifyWatcher>> Create(
      const asio::any_io_executor& executor);

  // Watches `directory` for the IN_* events in `mask`; returns the watch
  // descriptor (the same one when the directory is already watched).
  absl::StatusOr<int> AddWatch(const std::string& directory, uint32_t mask);

  // Waits until events are available and returns them (at least one).
  // Only one Read at a time. Returns Cancelled once Cancel() was called
  // (at once if before), or the read error.
  asio::awaitable<absl::StatusOr<std::vector<Event>>> Read();

  // Ends the pending and every later Read. Thread-safe, idempotent.
  void Cancel();

 private:
  explicit InotifyWatcher(asio::posix::stream_descriptor descriptor);

  std::mutex mu_;  // guards descriptor_ operations against Cancel()
  bool cancelled_ = false;
  asio::posix::stream_descriptor descriptor_;
  // Room for many events; inotify never splits one event across reads.
  alignas(8) std::array<char, 64 * 1024> buffer_;
};

}  // namespace sluice::io

#endif  // SLUICE_IO_INOTIFY_WATCHER_H_
