#include "engine/yield.h"

#include <map>
#include <string>
#include <thread>

#include "asio/io_context.hpp"
#include "asio/post.hpp"
#include "gtest/gtest.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice {
namespace {

using ::sluice::testing::CoroutineRunner;

// The handlers queued before the yield run before the yielding coroutine
// goes on.
TEST(YieldTest, HandlersQueuedBeforeTheYieldRunFirst) {
  asio::io_context io;
  CoroutineRunner runner(io);
  std::string order;
  runner.Spawn([&]() -> asio::awaitable<void> {
    order += "a";
    asio::post(io, [&] { order += "b"; });
    co_await YieldToOtherCoroutines();
    order += "c";
  });
  runner.RunToCompletion();
  EXPECT_EQ(order, "abc");
}

// A yield wakes no idle worker: with nothing else queued, the coroutine
// goes on on the thread it yielded on. (asio::post woke the other worker
// on every yield, which then took the coroutine over about half the time.)
TEST(YieldTest, ALoneCoroutineStaysOnItsWorker) {
  asio::io_context io(2);
  CoroutineRunner runner(io);
  constexpr int kYields = 1000;
  std::map<std::thread::id, int> resumed_on;
  runner.Spawn([&]() -> asio::awaitable<void> {
    for (int i = 0; i < kYields; ++i) {
      co_await YieldToOtherCoroutines();
      ++resumed_on[std::this_thread::get_id()];
    }
  });
  runner.RunToCompletion(/*threads=*/2);
  int most = 0;
  for (const auto& [thread, count] : resumed_on) most = std::max(most, count);
  EXPECT_GE(most, kYields * 9 / 10);
}

}  // namespace
}  // namespace sluice
