#include "engine/abort_signal.h"

#include <chrono>
#include <thread>

#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice {
namespace {

using ::sluice::testing::CoroutineRunner;

TEST(AbortSignalTest, SleepCompletesWhenNotAborted) {
  asio::io_context io;
  CoroutineRunner runner(io);
  AbortSignal signal;
  bool slept = false;
  runner.Spawn([&]() -> asio::awaitable<void> {
    slept = co_await signal.SleepFor(std::chrono::milliseconds(1));
  });
  runner.RunToCompletion();
  EXPECT_TRUE(slept);
}

TEST(AbortSignalTest, AbortWakesLongSleepersFromAnotherThread) {
  asio::io_context io;
  CoroutineRunner runner(io);
  AbortSignal signal;
  int woken = 0;
  for (int i = 0; i < 3; ++i) {
    runner.Spawn([&]() -> asio::awaitable<void> {
      if (!co_await signal.SleepFor(std::chrono::hours(1))) ++woken;
    });
  }
  io.poll();
  std::thread aborter([&] { signal.Abort(); });
  runner.RunToCompletion();
  aborter.join();
  EXPECT_EQ(woken, 3);
  EXPECT_TRUE(signal.aborted());
}

TEST(AbortSignalTest, SleepAfterAbortReturnsAtOnce) {
  asio::io_context io;
  CoroutineRunner runner(io);
  AbortSignal signal;
  signal.Abort();
  signal.Abort();
  bool slept = true;
  runner.Spawn([&]() -> asio::awaitable<void> {
    slept = co_await signal.SleepFor(std::chrono::hours(1));
  });
  runner.RunToCompletion();
  EXPECT_FALSE(slept);
}

}  // namespace
}  // namespace sluice
