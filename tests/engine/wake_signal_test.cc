#include "engine/wake_signal.h"

#include <chrono>
#include <thread>

#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice {
namespace {

using ::sluice::testing::CoroutineRunner;

TEST(WakeSignalTest, WaitWithoutNotifyTimesOut) {
  asio::io_context io;
  CoroutineRunner runner(io);
  WakeSignal wake;
  bool notified = true;
  runner.Spawn([&]() -> asio::awaitable<void> {
    notified = co_await wake.WaitFor(std::chrono::milliseconds(1));
  });
  runner.RunToCompletion();
  EXPECT_FALSE(notified);
}

TEST(WakeSignalTest, NotifyFromAnotherThreadEndsALongWait) {
  asio::io_context io;
  CoroutineRunner runner(io);
  WakeSignal wake;
  bool notified = false;
  runner.Spawn([&]() -> asio::awaitable<void> {
    notified = co_await wake.WaitFor(std::chrono::hours(1));
  });
  io.poll();
  std::thread notifier([&] { wake.Notify(); });
  runner.RunToCompletion();
  notifier.join();
  EXPECT_TRUE(notified);
}

TEST(WakeSignalTest, ANotifyBeforeTheWaitIsKeptOnce) {
  asio::io_context io;
  CoroutineRunner runner(io);
  WakeSignal wake;
  wake.Notify();
  wake.Notify();
  bool first = false;
  bool second = true;
  runner.Spawn([&]() -> asio::awaitable<void> {
    first = co_await wake.WaitFor(std::chrono::hours(1));
    second = co_await wake.WaitFor(std::chrono::milliseconds(1));
  });
  runner.RunToCompletion();
  EXPECT_TRUE(first);
  EXPECT_FALSE(second);
}

}  // namespace
}  // namespace sluice
