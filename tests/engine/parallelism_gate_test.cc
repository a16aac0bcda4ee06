#include "engine/parallelism_gate.h"

#include <atomic>
#include <optional>
#include <set>
#include <vector>

#include "asio/io_context.hpp"
#include "engine/map_worker.h"
#include "gtest/gtest.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice {
namespace {

using ::sluice::testing::CoroutineRunner;

TEST(ParallelismGateTest, AdmitsWorkersBelowTheLimitClampedToTheCap) {
  ParallelismGate gate(/*limit=*/2, /*cap=*/4);
  EXPECT_EQ(gate.cap(), 4u);
  EXPECT_EQ(gate.limit(), 2u);
  EXPECT_TRUE(gate.Admits(0));
  EXPECT_TRUE(gate.Admits(1));
  EXPECT_FALSE(gate.Admits(2));
  gate.SetLimit(10);
  EXPECT_EQ(gate.limit(), 4u);
  EXPECT_TRUE(gate.Admits(3));
  gate.SetLimit(0);
  EXPECT_EQ(gate.limit(), 1u);
  EXPECT_FALSE(gate.Admits(1));
  EXPECT_EQ(ParallelismGate(/*limit=*/7, /*cap=*/3).limit(), 3u);
}

TEST(ParallelismGateTest, AParkedWorkerResumesWhenTheLimitAdmitsIt) {
  asio::io_context io;
  CoroutineRunner runner(io);
  ParallelismGate gate(/*limit=*/1, /*cap=*/3);
  LoadMeter meter;
  meter.WorkerStarted();
  std::optional<bool> admitted;
  runner.Spawn([&]() -> asio::awaitable<void> {
    admitted = co_await gate.Wait(2, &meter);
  });
  io.poll();
  EXPECT_FALSE(admitted.has_value());      // parked
  EXPECT_EQ(meter.Flush().workers(), 0u);  // a parked worker is not alive
  gate.SetLimit(2);                        // still not worker 2
  io.restart();
  io.poll();
  EXPECT_FALSE(admitted.has_value());
  gate.SetLimit(3);
  runner.RunToCompletion();
  EXPECT_EQ(admitted, std::optional<bool>(true));
  EXPECT_EQ(meter.Flush().workers(), 1u);
}

TEST(ParallelismGateTest, CloseEndsEveryParkedAndLaterWait) {
  asio::io_context io;
  CoroutineRunner runner(io);
  ParallelismGate gate(/*limit=*/1, /*cap=*/3);
  std::vector<bool> results;
  for (size_t index : {1, 2}) {
    runner.Spawn([&, index]() -> asio::awaitable<void> {
      results.push_back(co_await gate.Wait(index, nullptr));
    });
  }
  io.poll();
  EXPECT_TRUE(results.empty());
  gate.Close();
  runner.Spawn([&]() -> asio::awaitable<void> {
    results.push_back(co_await gate.Wait(1, nullptr));
  });
  runner.RunToCompletion();
  EXPECT_EQ(results, std::vector<bool>({false, false, false}));
}

TEST(ParallelismGateTest, MapWorkersBehindAGateDeliverEveryItemAndAllReturn) {
  for (int threads : {1, 2}) {
    asio::io_context io;
    CoroutineRunner runner(io);
    Channel<int> input("input", 4);
    Channel<int> output("output", 4);
    ParallelismGate gate(/*limit=*/1, /*cap=*/4);
    std::atomic<int> finished = 0;
    std::atomic<int> taken = 0;
    runner.Spawn([&]() -> asio::awaitable<void> {
      for (int i = 0; i < 2000; ++i) {
        co_await input.Send(i);
        // Moves the limit while items flow: up to all four, back to one.
        if (i % 500 == 250) gate.SetLimit(4);
        if (i % 500 == 0) gate.SetLimit(1);
      }
      input.Close();
    });
    for (int w = 0; w < 4; ++w) {
      runner.Spawn([&, w]() -> asio::awaitable<void> {
        co_await RunMapWorker(
            &input, &output, static_cast<OrderedOutput<int>*>(nullptr), nullptr,
            [&](int item, std::vector<int>& out) {
              ++taken;
              out.push_back(item);
            },
            /*yield_after_each_item=*/true, &gate, w);
        if (++finished == 4) output.Close();
      });
    }
    std::multiset<int> received;
    runner.Spawn([&]() -> asio::awaitable<void> {
      while (std::optional<int> item = co_await output.Receive()) {
        received.insert(*item);
      }
    });
    runner.RunToCompletion(threads);
    EXPECT_EQ(finished, 4);
    EXPECT_EQ(taken, 2000);
    ASSERT_EQ(received.size(), 2000u);
    EXPECT_EQ(*received.begin(), 0);
    EXPECT_EQ(*received.rbegin(), 1999);
  }
}

}  // namespace
}  // namespace sluice
