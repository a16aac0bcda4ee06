#include "io/blocking_io_pool.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice::io {
namespace {

using ::sluice::testing::CoroutineRunner;

TEST(BlockingIoPoolTest, RunsTheCallOnAPoolThreadAndResumesOnTheExecutor) {
  asio::io_context io;
  CoroutineRunner runner(io);
  BlockingIoPool pool(1);
  const std::thread::id test_thread = std::this_thread::get_id();
  std::thread::id call_thread;
  std::thread::id resumed_thread;
  absl::StatusOr<std::unique_ptr<std::string>> result;
  runner.Spawn([&]() -> asio::awaitable<void> {
    std::string local = "made on the pool";
    result = co_await pool.Run(
        [&]() -> absl::StatusOr<std::unique_ptr<std::string>> {
          call_thread = std::this_thread::get_id();
          return std::make_unique<std::string>(local);
        });
    resumed_thread = std::this_thread::get_id();
  });
  runner.RunToCompletion();
  EXPECT_NE(call_thread, test_thread);
  EXPECT_EQ(resumed_thread, test_thread);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(**result, "made on the pool");
}

TEST(BlockingIoPoolTest, JoinWaitsForTheCallsUnderWay) {
  asio::io_context io;
  CoroutineRunner runner(io);
  BlockingIoPool pool(1);
  std::atomic<bool> done{false};
  runner.Spawn([&]() -> asio::awaitable<void> {
    co_await pool.Run([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      done = true;
      return 0;
    });
  });
  io.poll();  // starts the call
  pool.Join();
  EXPECT_TRUE(done);
  runner.RunToCompletion();
}

}  // namespace
}  // namespace sluice::io
