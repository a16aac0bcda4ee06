// Test helpers for coroutines: run awaitables to completion on an
// io_context driven by the test (one thread, or several).
//
//   asio::io_context io;
//   Spawn(io, Producer(channel));
//   RunToCompletion(io);   // rethrows the first exception of any task
#ifndef SLUICE_TESTS_TESTING_COROUTINE_RUNNER_H_
#define SLUICE_TESTS_TESTING_COROUTINE_RUNNER_H_

#include <concepts>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "asio/awaitable.hpp"
#include "asio/co_spawn.hpp"
#include "asio/io_context.hpp"

namespace sluice::testing {

// Spawns `task` on `io`; its exception, if any, is rethrown by
// RunToCompletion.
class CoroutineRunner {
 public:
  explicit CoroutineRunner(asio::io_context& io) : io_(io) {}

  // Spawns a coroutine lambda; the lambda object (and its captures) lives
  // until the coroutine finishes (never spawn `[&]{...}()` directly: the
  // temporary lambda would die before its coroutine).
  template <typename Lambda>
  requires std::invocable<Lambda&>
  void Spawn(Lambda lambda) {
    Spawn(Invoke(std::make_shared<Lambda>(std::move(lambda))));
  }

  void Spawn(asio::awaitable<void> task) {
    asio::co_spawn(io_, std::move(task), [this](std::exception_ptr error) {
      std::lock_guard lock(mu_);
      if (error && !first_error_) first_error_ = error;
    });
  }

  // Runs the io_context on `threads` threads until no work is left.
  void RunToCompletion(int threads = 1) {
    std::vector<std::thread> workers;
    for (int i = 1; i < threads; ++i)
      workers.emplace_back([this] { io_.run(); });
    io_.run();
    for (std::thread& worker : workers) worker.join();
    std::lock_guard lock(mu_);
    if (first_error_) std::rethrow_exception(first_error_);
  }

 private:
  template <typename Lambda>
  static asio::awaitable<void> Invoke(std::shared_ptr<Lambda> lambda) {
    co_await (*lambda)();
  }

  asio::io_context& io_;
  std::mutex mu_;
  std::exception_ptr first_error_;
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TESTING_COROUTINE_RUNNER_H_
