#include "stages/generic/reservoir_shuffler.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "asio/io_context.hpp"
#include "engine/channel.h"
#include "gtest/gtest.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice {
namespace {

using ::sluice::testing::CoroutineRunner;
using Shuffler = ReservoirShuffler<int>;

std::vector<int> IotaInts(int count) {
  std::vector<int> values(count);
  for (int i = 0; i < count; ++i) values[i] = i;
  return values;
}

TEST(ReservoirShufflerTest, AdmitFillsThenEvictsAResident) {
  Shuffler shuffler(/*size=*/4, /*min_fill=*/4, /*seed=*/1);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(shuffler.Admit(i), std::nullopt);
  EXPECT_EQ(shuffler.residents(), 4u);
  std::set<int> residents = {0, 1, 2, 3};
  for (int i = 4; i < 100; ++i) {
    const std::optional<int> evicted = shuffler.Admit(i);
    ASSERT_TRUE(evicted.has_value());
    ASSERT_EQ(residents.erase(*evicted), 1u) << *evicted;
    residents.insert(i);
    EXPECT_EQ(shuffler.residents(), 4u);
  }
}

TEST(ReservoirShufflerTest, TakeWhileRoomKeepsMinFillAndTheRoom) {
  Shuffler shuffler(/*size=*/10, /*min_fill=*/3, /*seed=*/1);
  for (int i = 0; i < 8; ++i) shuffler.Admit(i);
  std::vector<int> sent;
  // Room for two.
  EXPECT_EQ(shuffler.TakeWhileRoom(2, sent), 2u);
  EXPECT_EQ(shuffler.residents(), 6u);
  // More room: down to min_fill, not below.
  EXPECT_EQ(shuffler.TakeWhileRoom(100, sent), 3u);
  EXPECT_EQ(shuffler.residents(), 3u);
  EXPECT_EQ(sent.size(), 5u);
  // The rest drains by TakeRandom: all of 0..7 exactly once.
  while (shuffler.residents() > 0) sent.push_back(shuffler.TakeRandom());
  std::sort(sent.begin(), sent.end());
  EXPECT_EQ(sent, IotaInts(8));
}

TEST(ReservoirShufflerTest, MinFillZeroPassesStraightThrough) {
  Shuffler shuffler(/*size=*/10, /*min_fill=*/0, /*seed=*/1);
  for (int i = 0; i < 5; ++i) {
    shuffler.Admit(i);
    std::vector<int> sent;
    shuffler.TakeWhileRoom(64, sent);
    EXPECT_EQ(sent, std::vector<int>{i});
  }
}

// Admits 0..count-1 into a full-size reservoir and drains it.
std::vector<int> ShuffleOnce(uint64_t size, int count, uint64_t seed) {
  Shuffler shuffler(size, size, seed);
  std::vector<int> out;
  for (int i = 0; i < count; ++i) {
    if (std::optional<int> evicted = shuffler.Admit(i)) out.push_back(*evicted);
  }
  while (shuffler.residents() > 0) out.push_back(shuffler.TakeRandom());
  return out;
}

TEST(ReservoirShufflerTest, OrderDependsOnlyOnSeed) {
  const std::vector<int> a = ShuffleOnce(16, 500, 7);
  EXPECT_EQ(ShuffleOnce(16, 500, 7), a);
  EXPECT_NE(ShuffleOnce(16, 500, 8), a);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, IotaInts(500));
  EXPECT_NE(a, IotaInts(500));
}

// Run(), driven step by step: nothing leaves before min_fill items are in,
// then it keeps min_fill residents while the input is open, and drains
// everything once the input closes.
TEST(ReservoirShufflerTest, RunWaitsForMinFillThenDrainsOnClose) {
  asio::io_context io;
  CoroutineRunner runner(io);
  Channel<int> input("input", 100);
  Channel<int> output("output", 100);
  Shuffler shuffler(/*size=*/20, /*min_fill=*/10, /*seed=*/3);
  runner.Spawn(shuffler.Run(&input, &output, nullptr));
  for (int i = 0; i < 10; ++i) {
    int item = i;
    ASSERT_TRUE(input.TrySend(item));
  }
  io.poll();
  EXPECT_EQ(output.Size(), 0u);  // exactly min_fill in: nothing out
  int eleventh = 10;
  ASSERT_TRUE(input.TrySend(eleventh));
  io.poll();
  EXPECT_EQ(output.Size(), 1u);  // one above min_fill: one out
  const ReservoirMetrics open = shuffler.TakeMetrics();
  EXPECT_EQ(open.capacity, 20u);
  EXPECT_EQ(open.fill, 10u);
  EXPECT_EQ(open.received, 11u);
  EXPECT_EQ(open.emitted, 1u);
  input.Close();
  runner.RunToCompletion();
  std::vector<int> out;
  while (std::optional<int> item = output.TryReceive()) out.push_back(*item);
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out, IotaInts(11));
  const ReservoirMetrics drained = shuffler.TakeMetrics();
  EXPECT_EQ(drained.fill, 0u);
  EXPECT_EQ(drained.received, 0u);  // since the previous call
  EXPECT_EQ(drained.emitted, 10u);
}

// A full output holds items back: the reservoir grows towards size
// instead of emitting, then evicts (waiting for room) once full.
TEST(ReservoirShufflerTest, RunGrowsWhileOutputIsFull) {
  asio::io_context io;
  CoroutineRunner runner(io);
  Channel<int> input("input", 100);
  Channel<int> output("output", 2);
  Shuffler shuffler(/*size=*/8, /*min_fill=*/0, /*seed=*/3);
  runner.Spawn(shuffler.Run(&input, &output, nullptr));
  for (int i = 0; i < 10; ++i) {
    int item = i;
    ASSERT_TRUE(input.TrySend(item));
  }
  io.poll();
  // 2 in the output, 8 residents (full).
  EXPECT_EQ(output.Size(), 2u);
  EXPECT_EQ(shuffler.TakeMetrics().fill, 8u);
  input.Close();
  std::vector<int> out;
  for (int step = 0; step < 1000 && out.size() < 10; ++step) {
    io.poll();
    while (std::optional<int> item = output.TryReceive()) out.push_back(*item);
  }
  runner.RunToCompletion();
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out, IotaInts(10));
}

// An item that says what it holds (ResidentBytes, found by
// argument-dependent lookup).
struct Sized {
  uint64_t bytes = 0;
};
uint64_t ResidentBytes(const Sized& item) { return item.bytes; }

// resident_bytes sums what the residents hold through admission, eviction
// and draining, and the metric reports it as of the last group taken in.
TEST(ReservoirShufflerTest, ResidentBytesSumWhatTheResidentsHold) {
  ReservoirShuffler<Sized> shuffler(/*size=*/3, /*min_fill=*/3, /*seed=*/1);
  EXPECT_EQ(shuffler.Admit({10}), std::nullopt);
  EXPECT_EQ(shuffler.Admit({20}), std::nullopt);
  EXPECT_EQ(shuffler.Admit({30}), std::nullopt);
  EXPECT_EQ(shuffler.resident_bytes(), 60u);
  const std::optional<Sized> evicted = shuffler.Admit({1000});
  ASSERT_TRUE(evicted.has_value());
  EXPECT_EQ(shuffler.resident_bytes(), 1060 - evicted->bytes);
  uint64_t drained = 0;
  while (shuffler.residents() > 0) drained += shuffler.TakeRandom().bytes;
  EXPECT_EQ(drained, 1060 - evicted->bytes);
  EXPECT_EQ(shuffler.resident_bytes(), 0u);

  asio::io_context io;
  CoroutineRunner runner(io);
  Channel<Sized> input("input", 10);
  Channel<Sized> output("output", 10);
  ReservoirShuffler<Sized> running(/*size=*/8, /*min_fill=*/4, /*seed=*/1);
  runner.Spawn(running.Run(&input, &output, nullptr));
  for (uint64_t bytes : {1, 2, 4}) {
    Sized item{bytes};
    ASSERT_TRUE(input.TrySend(item));
  }
  io.poll();
  EXPECT_EQ(running.TakeMetrics().resident_bytes, 7u);
  input.Close();
  runner.RunToCompletion();
  EXPECT_EQ(running.TakeMetrics().resident_bytes, 0u);
  // Items without ResidentBytes report none.
  EXPECT_EQ(Shuffler(4, 4, 1).TakeMetrics().resident_bytes, 0u);
}

TEST(ReservoirShufflerTest, DeterministicScheduleGrowsByHalfTheInput) {
  Shuffler shuffler(/*size=*/10, /*min_fill=*/4, /*seed=*/1,
                    /*deterministic=*/true);
  // Below min_fill nothing counts; from min_fill on, the allowed residents
  // grow by one per two items taken in, up to size.
  std::vector<uint64_t> allowed;
  for (int i = 0; i < 20; ++i) {
    shuffler.Admit(i);
    const uint64_t now = shuffler.ScheduledResidents();
    while (shuffler.residents() > now) shuffler.TakeRandom();
    allowed.push_back(now);
  }
  EXPECT_EQ(allowed,
            (std::vector<uint64_t>{4, 4, 4, 4, 5,  5,  6,  6,  7,  7,
                                   8, 8, 9, 9, 10, 10, 10, 10, 10, 10}));
}

// The output of a deterministic shuffler of 0..199 whose output channel
// holds `room` items, drained only once the input has ended.
std::vector<int> DeterministicRun(size_t room, bool drain_as_it_goes) {
  asio::io_context io;
  CoroutineRunner runner(io);
  Channel<int> input("input", 256);
  Channel<int> output("output", room);
  Shuffler shuffler(/*size=*/32, /*min_fill=*/8, /*seed=*/5,
                    /*deterministic=*/true);
  runner.Spawn(shuffler.Run(&input, &output, nullptr));
  for (int i = 0; i < 200; ++i) {
    int item = i;
    EXPECT_TRUE(input.TrySend(item));
  }
  input.Close();
  std::vector<int> out;
  for (int step = 0; step < 100000 && out.size() < 200; ++step) {
    io.poll();
    if (drain_as_it_goes || step % 50 == 49) {
      while (std::optional<int> item = output.TryReceive()) {
        out.push_back(*item);
      }
    }
  }
  runner.RunToCompletion();
  return out;
}

TEST(ReservoirShufflerTest, DeterministicOutputDoesNotDependOnOutputRoom) {
  const std::vector<int> reference = DeterministicRun(1, true);
  ASSERT_EQ(reference.size(), 200u);
  EXPECT_EQ(DeterministicRun(256, true), reference);
  EXPECT_EQ(DeterministicRun(3, false), reference);
  std::vector<int> sorted = reference;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, IotaInts(200));
}

TEST(ReservoirShufflerTest, RunReturnsWhenOutputIsCancelled) {
  asio::io_context io;
  CoroutineRunner runner(io);
  Channel<int> input("input", 100);
  Channel<int> output("output", 1);
  Shuffler shuffler(/*size=*/2, /*min_fill=*/2, /*seed=*/3);
  runner.Spawn(shuffler.Run(&input, &output, nullptr));
  for (int i = 0; i < 5; ++i) {
    int item = i;
    ASSERT_TRUE(input.TrySend(item));
  }
  io.poll();  // blocked sending its second eviction
  output.Cancel();
  runner.RunToCompletion();  // returns: the input is still open
  SUCCEED();
}

}  // namespace
}  // namespace sluice
