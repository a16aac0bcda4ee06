#include "engine/ordered_output.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "asio/io_context.hpp"
#include "asio/post.hpp"
#include "asio/this_coro.hpp"
#include "asio/use_awaitable.hpp"
#include "engine/map_worker.h"
#include "gtest/gtest.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice {
namespace {

using ::sluice::testing::CoroutineRunner;

asio::awaitable<void> Yield() {
  co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
}

// Receives numbered items and Puts `item` copies of item * 10 + k, after
// yielding `item % 7` times so that workers finish out of order.
asio::awaitable<void> Worker(Channel<int>& input, OrderedOutput<int>& ordered,
                             std::atomic<int>& finished) {
  while (co_await ordered.Reserve(nullptr)) {
    std::optional<Numbered<int>> got = co_await input.ReceiveNumbered();
    if (!got) {
      ordered.Release();
      break;
    }
    for (int i = 0; i < got->item % 7; ++i) co_await Yield();
    std::vector<int> results;
    for (int k = 0; k < got->item % 3; ++k) {
      results.push_back(got->item * 10 + k);
    }
    if (!co_await ordered.Put(got->position, std::move(results), nullptr)) {
      break;
    }
  }
  ++finished;
}

TEST(OrderedOutputTest, ResultsLeaveInInputOrderWhoeverFinishesFirst) {
  for (int threads : {1, 3}) {
    asio::io_context io;
    CoroutineRunner runner(io);
    Channel<int> input("input", 8);
    Channel<int> output("output", 4);
    OrderedOutput<int> ordered(&output, /*window=*/5);
    std::atomic<int> finished = 0;
    runner.Spawn([&]() -> asio::awaitable<void> {
      for (int i = 0; i < 500; ++i) co_await input.Send(i);
      input.Close();
    });
    for (int w = 0; w < 4; ++w) {
      runner.Spawn(Worker(input, ordered, finished));
    }
    std::vector<int> received;
    runner.Spawn([&]() -> asio::awaitable<void> {
      while (std::optional<int> item = co_await output.Receive()) {
        received.push_back(*item);
      }
    });
    // Close the output once the workers are done (as a stage does).
    runner.Spawn([&]() -> asio::awaitable<void> {
      while (finished < 4) co_await Yield();
      output.Close();
    });
    runner.RunToCompletion(threads);
    std::vector<int> expected;
    for (int i = 0; i < 500; ++i) {
      for (int k = 0; k < i % 3; ++k) expected.push_back(i * 10 + k);
    }
    EXPECT_EQ(received, expected) << threads << " threads";
    const ReorderMetricsProto metrics = ordered.TakeMetrics();
    EXPECT_EQ(metrics.window(), 5u);
    EXPECT_EQ(metrics.parked(), 0u);
    // Never more parked than places in the window.
    EXPECT_LE(metrics.parked_max(), 5u);
    EXPECT_GE(metrics.parked_max(), 1u);
  }
}

TEST(OrderedOutputTest, AWorkerOutOfPlacesWaitsUntilEarlierResultsAreSent) {
  asio::io_context io;
  CoroutineRunner runner(io);
  Channel<int> output("output", 16);
  OrderedOutput<int> ordered(&output, /*window=*/2);
  bool third_reserved = false;
  runner.Spawn([&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await ordered.Reserve(nullptr));
    EXPECT_TRUE(co_await ordered.Reserve(nullptr));
    // Position 1 finishes first: parked, its place still taken.
    std::vector<int> ten = {10};
    EXPECT_TRUE(co_await ordered.Put(1, std::move(ten), nullptr));
    EXPECT_EQ(output.Size(), 0u);
  });
  runner.Spawn([&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await ordered.Reserve(nullptr));  // waits for a place
    third_reserved = true;
  });
  io.poll();
  EXPECT_FALSE(third_reserved);
  EXPECT_EQ(ordered.TakeMetrics().waits(), 1u);
  runner.Spawn([&]() -> asio::awaitable<void> {
    std::vector<int> zero = {0};
    EXPECT_TRUE(co_await ordered.Put(0, std::move(zero), nullptr));
  });
  runner.RunToCompletion();
  EXPECT_TRUE(third_reserved);
  EXPECT_EQ(output.TryReceive(), 0);
  EXPECT_EQ(output.TryReceive(), 10);
}

TEST(OrderedOutputTest, CancelEndsWaitingReservesAndClosedOutputFailsPut) {
  asio::io_context io;
  CoroutineRunner runner(io);
  Channel<int> output("output", 1);
  OrderedOutput<int> ordered(&output, /*window=*/1);
  std::optional<bool> waiting;
  runner.Spawn([&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await ordered.Reserve(nullptr));
    waiting = co_await ordered.Reserve(nullptr);
  });
  io.poll();
  EXPECT_FALSE(waiting.has_value());
  ordered.Cancel();
  output.Cancel();
  runner.Spawn([&]() -> asio::awaitable<void> {
    std::vector<int> first = {1, 2};
    EXPECT_FALSE(co_await ordered.Put(0, std::move(first), nullptr));
    std::vector<int> second = {3};
    EXPECT_FALSE(co_await ordered.Put(1, std::move(second), nullptr));
  });
  runner.RunToCompletion();
  EXPECT_EQ(waiting, false);
}

TEST(MapWorkerTest, ParallelWorkersKeepTheInputOrderWithAnOrderedOutput) {
  asio::io_context io;
  CoroutineRunner runner(io);
  Channel<int> input("input", 4);
  Channel<int> output("output", 4);
  OrderedOutput<int> ordered(&output, /*window=*/6);
  std::atomic<int> done = 0;
  runner.Spawn([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 300; ++i) co_await input.Send(i);
    input.Close();
  });
  auto transform = [](int item, std::vector<int>& out) {
    // Uneven work, so that workers overtake each other.
    volatile uint64_t sink = 0;
    for (int i = 0; i < item % 5 * 20000; ++i) sink = sink + i;
    if (item % 4 != 0) out.push_back(item);
  };
  for (int w = 0; w < 3; ++w) {
    runner.Spawn([&, transform]() -> asio::awaitable<void> {
      co_await RunMapWorker(&input, &output, &ordered, nullptr, transform);
      if (++done == 3) output.Close();
    });
  }
  std::vector<int> received;
  runner.Spawn([&]() -> asio::awaitable<void> {
    while (std::optional<int> item = co_await output.Receive()) {
      received.push_back(*item);
    }
  });
  runner.RunToCompletion(3);
  std::vector<int> expected;
  for (int i = 0; i < 300; ++i) {
    if (i % 4 != 0) expected.push_back(i);
  }
  EXPECT_EQ(received, expected);
}

}  // namespace
}  // namespace sluice
