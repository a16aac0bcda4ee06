#include "engine/channel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "tests/testing/coroutine_runner.h"
#include "tests/testing/sanitizers.h"

namespace sluice {
namespace {

using ::sluice::testing::CoroutineRunner;
using IntChannel = Channel<int>;

asio::awaitable<void> SendRange(IntChannel& channel, int begin, int end,
                                bool close_after) {
  for (int i = begin; i < end; ++i) {
    EXPECT_TRUE(co_await channel.Send(i));
  }
  if (close_after) channel.Close();
}

asio::awaitable<void> ReceiveAll(IntChannel& channel, std::vector<int>& out) {
  while (std::optional<int> item = co_await channel.Receive()) {
    out.push_back(*item);
  }
}

TEST(ChannelTest, DeliversInOrderAndEndsAfterClose) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 4);
  std::vector<int> received;
  runner.Spawn(SendRange(channel, 0, 100, /*close_after=*/true));
  runner.Spawn(ReceiveAll(channel, received));
  runner.RunToCompletion();
  ASSERT_EQ(received.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(received[i], i);
  EXPECT_EQ(channel.GetTotalPutCount(), 100u);
  EXPECT_EQ(channel.GetTotalGetCount(), 100u);
  EXPECT_EQ(channel.GetTotalDropCount(), 0u);
}

TEST(ChannelTest, CloseLetsBufferedItemsDrain) {
  // asio 1.22's channel::close() discards buffered items; ours must not.
  IntChannel channel("output", 8);
  for (int i = 0; i < 5; ++i) {
    int item = i;
    ASSERT_TRUE(channel.TrySend(item));
  }
  channel.Close();
  EXPECT_TRUE(channel.IsClosed());
  asio::io_context io;
  CoroutineRunner runner(io);
  std::vector<int> received;
  runner.Spawn(ReceiveAll(channel, received));
  runner.RunToCompletion();
  EXPECT_EQ(received, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(ChannelTest, SendAfterCloseFailsCleanly) {
  IntChannel channel("output", 2);
  channel.Close();
  asio::io_context io;
  CoroutineRunner runner(io);
  bool accepted = true;
  runner.Spawn(
      [&]() -> asio::awaitable<void> { accepted = co_await channel.Send(7); });
  runner.RunToCompletion();
  EXPECT_FALSE(accepted);
  EXPECT_EQ(channel.GetTotalPutCount(), 0u);
}

TEST(ChannelTest, BlockPolicyAppliesBackpressure) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 4);
  std::atomic<int> sent{0};
  runner.Spawn([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 10; ++i) {
      co_await channel.Send(i);
      ++sent;
    }
  });
  // Drive the loop until the producer can make no progress.
  io.poll();
  EXPECT_EQ(sent.load(), 4);
  EXPECT_EQ(channel.Size(), 4u);
  // Above half capacity the suspended sender stays suspended...
  EXPECT_EQ(channel.TryReceive(), 0);
  io.poll();
  EXPECT_EQ(sent.load(), 4);
  // ...at half capacity it is resumed and refills the channel.
  EXPECT_EQ(channel.TryReceive(), 1);
  io.poll();
  EXPECT_EQ(sent.load(), 6);
  EXPECT_EQ(channel.Size(), 4u);
  for (int expected = 2; expected < 6; ++expected) {
    EXPECT_EQ(channel.TryReceive(), expected);
  }
  channel.Cancel();
  runner.RunToCompletion();
}

TEST(ChannelTest, CloseWakesSuspendedSendersAndReceivers) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel full("full", 1);
  IntChannel empty("empty", 1);
  int first = 1;
  ASSERT_TRUE(full.TrySend(first));
  std::vector<bool> send_results;
  std::vector<bool> receive_got_item;
  for (int i = 0; i < 3; ++i) {
    runner.Spawn([&]() -> asio::awaitable<void> {
      send_results.push_back(co_await full.Send(2));
    });
    runner.Spawn([&]() -> asio::awaitable<void> {
      receive_got_item.push_back((co_await empty.Receive()).has_value());
    });
  }
  io.poll();
  EXPECT_TRUE(send_results.empty());
  EXPECT_TRUE(receive_got_item.empty());
  full.Close();
  empty.Close();
  runner.RunToCompletion();
  EXPECT_EQ(send_results, (std::vector<bool>{false, false, false}));
  EXPECT_EQ(receive_got_item, (std::vector<bool>{false, false, false}));
  // The item buffered before the close still drains.
  EXPECT_EQ(full.TryReceive(), 1);
}

TEST(ChannelTest, ReceiveSomeTakesWhatIsBufferedUpToMax) {
  IntChannel channel("output", 8);
  for (int i = 0; i < 5; ++i) {
    int item = i;
    ASSERT_TRUE(channel.TrySend(item));
  }
  asio::io_context io;
  CoroutineRunner runner(io);
  std::vector<int> first;
  std::vector<int> second;
  bool first_ok = false;
  bool second_ok = false;
  runner.Spawn([&]() -> asio::awaitable<void> {
    first_ok = co_await channel.ReceiveSome(first, 3);
    second_ok = co_await channel.ReceiveSome(second, 10);
  });
  runner.RunToCompletion();
  EXPECT_TRUE(first_ok);
  EXPECT_TRUE(second_ok);
  EXPECT_EQ(first, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(second, (std::vector<int>{3, 4}));
  EXPECT_EQ(channel.GetTotalGetCount(), 5u);
}

TEST(ChannelTest, ReceiveSomeWaitsForAnItemThenEndsAfterClose) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 4);
  std::vector<int> items;
  std::vector<bool> results;
  runner.Spawn([&]() -> asio::awaitable<void> {
    while (true) {
      const bool got = co_await channel.ReceiveSome(items, 16);
      results.push_back(got);
      if (!got) break;
    }
  });
  io.poll();
  EXPECT_TRUE(results.empty());  // suspended on the empty channel
  runner.Spawn(SendRange(channel, 0, 10, /*close_after=*/true));
  runner.RunToCompletion();
  EXPECT_EQ(items, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  ASSERT_FALSE(results.empty());
  EXPECT_FALSE(results.back());
  EXPECT_TRUE(std::all_of(results.begin(), results.end() - 1,
                          [](bool got) { return got; }));
}

TEST(ChannelTest, ReceiveSomeResumesSuspendedSenders) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 4);
  runner.Spawn(SendRange(channel, 0, 12, /*close_after=*/true));
  io.poll();
  EXPECT_EQ(channel.Size(), 4u);  // the sender waits for room
  std::vector<int> items;
  runner.Spawn([&]() -> asio::awaitable<void> {
    while (co_await channel.ReceiveSome(items, 100)) {
    }
  });
  runner.RunToCompletion();
  std::vector<int> expected(12);
  for (int i = 0; i < 12; ++i) expected[i] = i;
  EXPECT_EQ(items, expected);
}

TEST(ChannelTest, RaisingTheCapacityLetsSuspendedSendersIn) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 2);
  runner.Spawn(SendRange(channel, 0, 6, /*close_after=*/false));
  io.poll();
  EXPECT_EQ(channel.Size(), 2u);  // the sender waits for room
  EXPECT_EQ(channel.send_waits(), 1u);
  channel.SetCapacity(8);
  EXPECT_EQ(channel.capacity(), 8u);
  io.restart();
  io.poll();
  EXPECT_EQ(channel.Size(), 6u);  // no receiver needed
  // A cut drops nothing: the buffered items stay, sends wait below it.
  channel.SetCapacity(0);
  EXPECT_EQ(channel.capacity(), 1u);
  int item = 6;
  EXPECT_FALSE(channel.TrySend(item));
  std::vector<int> items;
  while (std::optional<int> got = channel.TryReceive()) items.push_back(*got);
  EXPECT_EQ(items, std::vector<int>({0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(channel.TrySend(item));
}

TEST(ChannelTest, CountsReceiversThatWaitOnAnEmptyChannel) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 2);
  runner.Spawn([&]() -> asio::awaitable<void> {
    while (co_await channel.Receive()) {
    }
  });
  io.poll();
  EXPECT_EQ(channel.receive_waits(), 1u);
  channel.Close();
  runner.RunToCompletion();
  EXPECT_EQ(channel.send_waits(), 0u);
}

TEST(ChannelTest, RoomAndTrySendSomeTakeWhatFitsAndLeaveTheRest) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 4);
  // A suspended receiver is handed the first item; three more fit.
  std::vector<int> first;
  runner.Spawn([&]() -> asio::awaitable<void> {
    if (std::optional<int> item = co_await channel.Receive()) {
      first.push_back(*item);
    }
  });
  io.poll();
  EXPECT_EQ(channel.Room(), 5u);
  std::vector<int> items = {10, 11, 12, 13, 14, 15};
  EXPECT_EQ(channel.TrySendSome(std::span<int>(items)), 5u);
  EXPECT_EQ(items[5], 15);  // refused: left untouched
  EXPECT_EQ(channel.Size(), 4u);
  EXPECT_EQ(channel.Room(), 0u);
  io.poll();
  EXPECT_EQ(first, std::vector<int>{10});
  // Full: nothing taken. Closed: nothing taken.
  EXPECT_EQ(channel.TrySendSome(std::span<int>(items).subspan(5)), 0u);
  channel.Close();
  std::vector<int> more = {20};
  EXPECT_EQ(channel.TrySendSome(std::span<int>(more)), 0u);
  std::vector<int> rest;
  io.restart();
  runner.Spawn(ReceiveAll(channel, rest));
  runner.RunToCompletion();
  EXPECT_EQ(rest, (std::vector<int>{11, 12, 13, 14}));
}

TEST(ChannelTest, SendAllSuspendsOnlyWhenFullAndStopsWhenClosed) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 2);
  std::vector<int> items = {1, 2, 3, 4, 5};
  bool sent_all = false;
  runner.Spawn([&]() -> asio::awaitable<void> {
    sent_all = co_await channel.SendAll(std::span<int>(items));
    channel.Close();
  });
  std::vector<int> got;
  runner.Spawn(ReceiveAll(channel, got));
  runner.RunToCompletion();
  EXPECT_TRUE(sent_all);
  EXPECT_EQ(got, (std::vector<int>{1, 2, 3, 4, 5}));

  // A cancelled channel ends the send; what fitted before stays sent.
  IntChannel full("full", 2);
  std::vector<int> more = {6, 7, 8};
  bool result = true;
  io.restart();
  runner.Spawn([&]() -> asio::awaitable<void> {
    result = co_await full.SendAll(std::span<int>(more));
  });
  io.poll();
  EXPECT_EQ(full.Size(), 2u);
  full.Cancel();
  runner.RunToCompletion();
  EXPECT_FALSE(result);
}

// Records (position, item) of each item taken, until `max` items or the end.
asio::awaitable<void> ReceiveNumberedUpTo(
    IntChannel& channel, size_t max,
    std::vector<std::pair<uint64_t, int>>& out) {
  while (out.size() < max) {
    std::optional<Numbered<int>> got = co_await channel.ReceiveNumbered();
    if (!got) break;
    out.emplace_back(got->position, got->item);
  }
}

TEST(ChannelTest, NumberedReceivesTellEachItemsPlaceWhoeverTakesIt) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 4);
  // Each receiver stops at 500 items, so both take some however the two
  // threads interleave them.
  std::vector<std::pair<uint64_t, int>> first, second;
  runner.Spawn(SendRange(channel, 0, 1000, /*close_after=*/true));
  runner.Spawn(ReceiveNumberedUpTo(channel, 500, first));
  runner.Spawn(ReceiveNumberedUpTo(channel, 500, second));
  runner.RunToCompletion(2);
  EXPECT_EQ(first.size(), 500u);
  EXPECT_EQ(second.size(), 500u);
  std::vector<std::pair<uint64_t, int>> all = first;
  all.insert(all.end(), second.begin(), second.end());
  // One producer: the item sent i-th is the one received at position i.
  for (const auto& [position, item] : all) {
    EXPECT_EQ(position, static_cast<uint64_t>(item));
  }
}

TEST(ChannelTest, ReceiveSomeTellsThePlaceOfItsFirstItem) {
  IntChannel channel("output", 16);
  for (int i = 0; i < 10; ++i) {
    int item = i;
    ASSERT_TRUE(channel.TrySend(item));
  }
  channel.Close();
  asio::io_context io;
  CoroutineRunner runner(io);
  std::vector<std::pair<uint64_t, std::vector<int>>> takes;
  runner.Spawn([&]() -> asio::awaitable<void> {
    EXPECT_EQ(channel.TryReceive(), 0);  // position 0
    std::vector<int> items;
    uint64_t first = 99;
    while (co_await channel.ReceiveSome(items, 4, nullptr, &first)) {
      takes.emplace_back(first, items);
      items.clear();
    }
  });
  runner.RunToCompletion();
  ASSERT_EQ(takes.size(), 3u);
  EXPECT_EQ(takes[0].first, 1u);
  EXPECT_EQ(takes[0].second, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(takes[1].first, 5u);
  EXPECT_EQ(takes[2].first, 9u);
  EXPECT_EQ(takes[2].second, (std::vector<int>{9}));
}

TEST(ChannelTest, CancelDiscardsBufferedItems) {
  IntChannel channel("output", 4);
  int item = 1;
  ASSERT_TRUE(channel.TrySend(item));
  channel.Cancel();
  EXPECT_EQ(channel.Size(), 0u);
  EXPECT_EQ(channel.TryReceive(), std::nullopt);
  EXPECT_TRUE(channel.IsClosed());
}

TEST(ChannelTest, DropNewDropsIncomingItemsWhenFull) {
  IntChannel channel("output", 2, OverflowPolicy::kDropNew);
  for (int i = 0; i < 5; ++i) {
    int item = i;
    EXPECT_TRUE(channel.TrySend(item));
  }
  EXPECT_EQ(channel.TryReceive(), 0);
  EXPECT_EQ(channel.TryReceive(), 1);
  EXPECT_EQ(channel.TryReceive(), std::nullopt);
  EXPECT_EQ(channel.GetTotalPutCount(), 5u);
  EXPECT_EQ(channel.GetTotalDropCount(), 3u);
  EXPECT_EQ(channel.GetTotalGetCount(), 2u);
}

TEST(ChannelTest, KeepNewestDropsOldestItemsWhenFull) {
  IntChannel channel("output", 2, OverflowPolicy::kKeepNewest);
  for (int i = 0; i < 5; ++i) {
    int item = i;
    EXPECT_TRUE(channel.TrySend(item));
  }
  EXPECT_EQ(channel.TryReceive(), 3);
  EXPECT_EQ(channel.TryReceive(), 4);
  EXPECT_EQ(channel.GetTotalDropCount(), 3u);
}

TEST(ChannelTest, CountersResetWhenAsked) {
  IntChannel channel("output", 1, OverflowPolicy::kDropNew);
  for (int i = 0; i < 3; ++i) {
    int item = i;
    channel.TrySend(item);
  }
  channel.TryReceive();
  EXPECT_EQ(channel.GetTotalPutCount(/*reset=*/true), 3u);
  EXPECT_EQ(channel.GetTotalPutCount(), 0u);
  EXPECT_EQ(channel.GetTotalDropCount(/*reset=*/true), 2u);
  EXPECT_EQ(channel.GetTotalDropCount(), 0u);
  EXPECT_EQ(channel.GetTotalGetCount(/*reset=*/true), 1u);
  EXPECT_EQ(channel.GetTotalGetCount(), 0u);
  const QueueMetricProto metrics = channel.Metrics(/*reset_counters=*/false);
  EXPECT_EQ(metrics.name(), "output");
  EXPECT_EQ(metrics.capacity(), 1u);
  EXPECT_EQ(metrics.element_type(), "int");
}

TEST(ChannelTest, BlockingGetTimesOutThenReceivesThenEnds) {
  IntChannel channel("output", 2);
  auto first = channel.Get(std::chrono::milliseconds(1));
  EXPECT_EQ(first.kind, IntChannel::GetResult::Kind::kTimeout);
  std::thread producer([&] {
    int item = 42;
    while (!channel.TrySend(item)) std::this_thread::yield();
    channel.Close();
  });
  auto second = channel.Get(std::chrono::seconds(30));
  producer.join();
  ASSERT_EQ(second.kind, IntChannel::GetResult::Kind::kItem);
  EXPECT_EQ(*second.item, 42);
  EXPECT_EQ(channel.Get(std::chrono::seconds(30)).kind,
            IntChannel::GetResult::Kind::kEndOfStream);
}

// A steady stream makes the getter spin longer; a timeout still ends the
// wait, and items still arrive after a sleep.
TEST(ChannelTest, BlockingGetAdaptsItsSpinningAndStillTimesOut) {
  IntChannel channel("output", 4);
  constexpr int kItems = 2000;
  std::thread producer([&] {
    for (int i = 0; i < kItems; ++i) {
      int item = i;
      while (!channel.TrySend(item)) std::this_thread::yield();
      std::this_thread::yield();
    }
  });
  int expected = 0;
  while (expected < kItems) {
    auto got = channel.Get(std::chrono::seconds(30));
    ASSERT_EQ(got.kind, IntChannel::GetResult::Kind::kItem);
    EXPECT_EQ(*got.item, expected++);
  }
  producer.join();
  EXPECT_EQ(channel.Get(std::chrono::milliseconds(1)).kind,
            IntChannel::GetResult::Kind::kTimeout);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int item = -1;
    channel.TrySend(item);
  });
  auto got = channel.Get(std::chrono::seconds(30));
  late.join();
  ASSERT_EQ(got.kind, IntChannel::GetResult::Kind::kItem);
  EXPECT_EQ(*got.item, -1);
}

TEST(ChannelTest, BlockingGetWakesSuspendedSender) {
  asio::io_context io;
  CoroutineRunner runner(io);
  IntChannel channel("output", 1);
  runner.Spawn(SendRange(channel, 0, 50, /*close_after=*/true));
  std::thread loop([&] { runner.RunToCompletion(); });
  std::vector<int> received;
  while (true) {
    auto got = channel.Get(std::chrono::seconds(30));
    if (got.kind != IntChannel::GetResult::Kind::kItem) break;
    received.push_back(*got.item);
  }
  loop.join();
  ASSERT_EQ(received.size(), 50u);
  EXPECT_TRUE(std::is_sorted(received.begin(), received.end()));
}

// 4 producers x 4 consumers on 4 threads, one million items (a fifth of
// them under a sanitizer): nothing lost, nothing duplicated, FIFO per
// producer. Also run under ThreadSanitizer.
TEST(ChannelStressTest, FourByFourMillionItems) {
  constexpr int kProducers = 4;
  constexpr int kConsumers = 4;
  constexpr int kPerProducer = testing::UnlessSanitizer(250'000, 50'000);
  asio::io_context io(4);
  CoroutineRunner runner(io);
  Channel<uint64_t> channel("output", 64);
  std::atomic<int> producers_left{kProducers};
  std::vector<std::vector<uint64_t>> received(kConsumers);
  for (int p = 0; p < kProducers; ++p) {
    runner.Spawn([&, p]() -> asio::awaitable<void> {
      for (uint64_t i = 0; i < kPerProducer; ++i) {
        co_await channel.Send((uint64_t{static_cast<unsigned>(p)} << 32) | i);
      }
      if (--producers_left == 0) channel.Close();
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    runner.Spawn([&, c]() -> asio::awaitable<void> {
      while (auto item = co_await channel.Receive())
        received[c].push_back(*item);
    });
  }
  runner.RunToCompletion(/*threads=*/4);

  std::vector<uint64_t> all;
  for (const auto& part : received) {
    // Per consumer, each producer's items arrive in increasing order.
    std::vector<int64_t> last(kProducers, -1);
    for (uint64_t item : part) {
      const int producer = static_cast<int>(item >> 32);
      const int64_t index = static_cast<int64_t>(item & 0xffffffff);
      EXPECT_GT(index, last[producer]);
      last[producer] = index;
    }
    all.insert(all.end(), part.begin(), part.end());
  }
  ASSERT_EQ(all.size(), size_t{kProducers} * kPerProducer);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  EXPECT_EQ(channel.GetTotalPutCount(), all.size());
  EXPECT_EQ(channel.GetTotalGetCount(), all.size());
}

}  // namespace
}  // namespace sluice
