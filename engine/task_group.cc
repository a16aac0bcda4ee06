#include "engine/task_group.h"

#include <utility>

#include "asio/co_spawn.hpp"

namespace sluice {

TaskGroup::TaskGroup(asio::any_io_executor executor, ErrorHandler on_error)
    : executor_(std::move(executor)), on_error_(std::move(on_error)) {}

void TaskGroup::Spawn(std::string owner, asio::awaitable<void> task) {
  {
    std::lock_guard lock(mu_);
    ++active_;
  }
  asio::co_spawn(executor_, std::move(task),
                 [this, owner = std::move(owner)](std::exception_ptr error) {
                   if (error) on_error_(owner, error);
                   std::lock_guard lock(mu_);
                   if (--active_ == 0) idle_.notify_all();
                 });
}

bool TaskGroup::WaitIdle(std::chrono::nanoseconds timeout) {
  std::unique_lock lock(mu_);
  return idle_.wait_for(lock, timeout, [this] { return active_ == 0; });
}

size_t TaskGroup::active() const {
  std::lock_guard lock(mu_);
  return active_;
}

}  // namespace sluice
