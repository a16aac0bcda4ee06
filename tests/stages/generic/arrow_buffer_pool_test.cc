#include "stages/generic/internal/arrow_buffer_pool.h"

#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

std::vector<std::byte> Buffer(size_t bytes) {
  return std::vector<std::byte>(bytes, std::byte{1});
}

// The tests of this file share the process-wide cache: each starts by
// emptying it.
void DrainIdleBuffers() {
  ArrowBufferPool pool(0);
  while (ArrowBufferPool::IdleBytes() > 0) pool.Take(0);
}

// A returned buffer serves the next Take, memory and all; past `keep`
// returned buffers are freed.
TEST(ArrowBufferPoolTest, ReturnedBuffersServeLaterTakesUpToKeep) {
  DrainIdleBuffers();
  ArrowBufferPool pool(2);
  EXPECT_EQ(pool.Take(0).capacity(), 0u);
  std::vector<std::byte> a = Buffer(1000);
  const std::byte* memory = a.data();
  pool.Give(std::move(a), 0);
  std::vector<std::byte> again = pool.Take(0);
  EXPECT_EQ(again.data(), memory);
  EXPECT_EQ(again.size(), 1000u);
  pool.Give(std::move(again), 0);
  pool.Give(Buffer(10), 0);
  pool.Give(Buffer(20), 0);  // a third: freed
  EXPECT_EQ(pool.Take(0).size(), 10u);
  EXPECT_EQ(pool.Take(0).size(), 1000u);
  EXPECT_EQ(pool.Take(0).capacity(), 0u);
}

// A Take gets the buffer given last to its home, else one of another home.
TEST(ArrowBufferPoolTest, BuffersGoBackToTheirHome) {
  DrainIdleBuffers();
  ArrowBufferPool pool(8);
  pool.Give(Buffer(10), 0);
  pool.Give(Buffer(11), 1);
  pool.Give(Buffer(12), 0);
  pool.Give(Buffer(13), 1);
  EXPECT_EQ(pool.Take(1).size(), 13u);
  EXPECT_EQ(pool.Take(0).size(), 12u);
  EXPECT_EQ(pool.Take(0).size(), 10u);
  EXPECT_EQ(pool.Take(0).size(), 11u);  // home 0 has none left
  EXPECT_EQ(pool.Take(1).capacity(), 0u);
  // Homes past the pool's count share one.
  pool.Give(Buffer(14), 1000);
  EXPECT_EQ(pool.Take(1000).size(), 14u);
}

// A pool that is gone leaves its buffers to the next pool of the process.
TEST(ArrowBufferPoolTest, AGonePoolLeavesItsBuffersToTheNext) {
  DrainIdleBuffers();
  const std::byte* memory = nullptr;
  {
    ArrowBufferPool first(4);
    std::vector<std::byte> buffer = Buffer(4096);
    memory = buffer.data();
    first.Give(std::move(buffer), 0);
  }
  EXPECT_GE(ArrowBufferPool::IdleBytes(), 4096u);
  ArrowBufferPool next(4);
  std::vector<std::byte> taken = next.Take(0);
  EXPECT_EQ(taken.data(), memory);
  EXPECT_EQ(ArrowBufferPool::IdleBytes(), 0u);
}

// The idle cache holds at most kIdleBufferBytes; what does not fit is
// freed.
TEST(ArrowBufferPoolTest, TheIdleCacheIsBounded) {
  DrainIdleBuffers();
  {
    ArrowBufferPool pool(8);
    for (int i = 0; i < 3; ++i) pool.Give(Buffer(kIdleBufferBytes / 2), 0);
  }
  EXPECT_LE(ArrowBufferPool::IdleBytes(), kIdleBufferBytes);
  EXPECT_GE(ArrowBufferPool::IdleBytes(), kIdleBufferBytes / 2);
  DrainIdleBuffers();
}

// Buffers come back from other threads (a batch's last view can die
// anywhere) while the pool's own thread takes them.
TEST(ArrowBufferPoolTest, GiveAndTakeFromManyThreads) {
  DrainIdleBuffers();
  ArrowBufferPool pool(16);
  {
    std::vector<std::jthread> threads;
    for (unsigned t = 0; t < 4; ++t) {
      threads.emplace_back([&pool, t] {
        for (int i = 0; i < 1000; ++i) {
          const unsigned home = ArrowBufferPool::CurrentHome();
          std::vector<std::byte> buffer = pool.Take(home);
          if (buffer.empty()) buffer = Buffer(64);
          pool.Give(std::move(buffer), i % 2 == 0 ? home : t);
        }
      });
    }
  }
  size_t kept = 0;
  while (pool.Take(0).size() == 64) ++kept;
  EXPECT_GE(kept, 1u);
  EXPECT_LE(kept, 16u);
}

}  // namespace
}  // namespace sluice
