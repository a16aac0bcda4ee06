#include "io/inotify_watcher.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "asio/associated_executor.hpp"
#include "asio/async_result.hpp"
#include "asio/buffer.hpp"
#include "asio/experimental/as_tuple.hpp"
#include "asio/post.hpp"
#include "asio/use_awaitable.hpp"

namespace sluice::io {
namespace {

// Splits what one read returned into events (a plain function: a coroutine
// frame cannot hold an inotify_event, whose name is a flexible array).
std::vector<InotifyWatcher::Event> ParseEvents(const char* data, size_t bytes) {
  std::vector<InotifyWatcher::Event> events;
  size_t offset = 0;
  while (offset + sizeof(inotify_event) <= bytes) {
    inotify_event header;
    std::memcpy(&header, data + offset, sizeof(header));
    const char* name = data + offset + sizeof(inotify_event);
    events.push_back(
        {header.wd, header.mask, std::string(name, strnlen(name, header.len))});
    offset += sizeof(inotify_event) + header.len;
  }
  return events;
}

}  // namespace

absl::StatusOr<std::unique_ptr<InotifyWatcher>> InotifyWatcher::Create(
    const asio::any_io_executor& executor) {
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, "inotify_init1");
  return std::unique_ptr<InotifyWatcher>(
      new InotifyWatcher(asio::posix::stream_descriptor(executor, fd)));
}

InotifyWatcher::InotifyWatcher(asio::posix::stream_descriptor descriptor)
    : descriptor_(std::move(descriptor)) {}

absl::StatusOr<int> InotifyWatcher::AddWatch(const std::string& directory,
                                             uint32_t mask) {
  std::lock_guard lock(mu_);
  const int wd =
      inotify_add_watch(descriptor_.native_handle(), directory.c_str(), mask);
  if (wd < 0) {
    return absl::ErrnoToStatus(errno,
                               absl::StrCat("inotify watch on ", directory));
  }
  return wd;
}

asio::awaitable<absl::StatusOr<std::vector<InotifyWatcher::Event>>>
InotifyWatcher::Read() {
  auto token = asio::experimental::as_tuple(asio::use_awaitable);
  auto [error,
        bytes] = co_await asio::async_initiate<decltype(token),
                                               void(asio::error_code, size_t)>(
      [this](auto handler) {
        std::lock_guard lock(mu_);
        if (cancelled_) {
          auto executor = asio::get_associated_executor(handler);
          asio::post(executor, [h = std::move(handler)]() mutable {
            std::move(h)(asio::error::operation_aborted, size_t{0});
          });
          return;
        }
        // Started under the lock, so a concurrent Cancel() either comes
        // before (and is seen above) or finds this read to cancel.
        descriptor_.async_read_some(asio::buffer(buffer_), std::move(handler));
      },
      token);
  if (error == asio::error::operation_aborted) {
    co_return absl::CancelledError("inotify watcher cancelled");
  }
  if (error) {
    co_return absl::InternalError(
        absl::StrCat("inotify read: ", error.message()));
  }
  co_return ParseEvents(buffer_.data(), bytes);
}

void InotifyWatcher::Cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  asio::error_code ignored;
  descriptor_.cancel(ignored);
}

}  // namespace sluice::io
