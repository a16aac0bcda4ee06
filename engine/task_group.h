// TaskGroup: owns coroutines spawned on an executor until they finish
// (seastar's gate, folly's AsyncScope). The pipeline owns one; stages spawn
// their coroutines into it instead of detaching them.
//
//   TaskGroup tasks(executor, [](const std::string& owner,
//                                std::exception_ptr error) { Fail(...); });
//   tasks.Spawn("reader", ReadLoop());
//   ...
//   tasks.WaitIdle(std::chrono::seconds(5));  // from a non-executor thread
#ifndef SLUICE_ENGINE_TASK_GROUP_H_
#define SLUICE_ENGINE_TASK_GROUP_H_

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>

#include "asio/any_io_executor.hpp"
#include "asio/awaitable.hpp"

namespace sluice {

class TaskGroup {
 public:
  // Called (on an executor thread) for each task that ends with an
  // exception, with the owner name given to Spawn.
  using ErrorHandler =
      std::function<void(const std::string& owner, std::exception_ptr error)>;

  TaskGroup(asio::any_io_executor executor, ErrorHandler on_error);
  // The group must be idle (WaitIdle returned true) before destruction.
  ~TaskGroup() = default;
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  // Starts `task` on the executor; thread-safe.
  void Spawn(std::string owner, asio::awaitable<void> task);

  // Blocks until every spawned task has finished or `timeout` passed;
  // true when idle. Never call it from an executor thread.
  bool WaitIdle(std::chrono::nanoseconds timeout);

  // Tasks still running.
  size_t active() const;

  const asio::any_io_executor& executor() const { return executor_; }

 private:
  asio::any_io_executor executor_;
  ErrorHandler on_error_;
  mutable std::mutex mu_;
  std::condition_variable idle_;
  size_t active_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_TASK_GROUP_H_
