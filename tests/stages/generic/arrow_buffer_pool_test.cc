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
  while (ArrowBufferPool::IdleBytes() > 0) pool.Take();
}

// A returned buffer serves the next Take, memory and all; past `keep`
// returned buffers are freed.
TEST(ArrowBufferPoolTest, ReturnedBuffersServeLaterTakesUpToKeep) {
  DrainIdleBuffers();
  ArrowBufferPool pool(2);
  EXPECT_EQ(pool.Take().capacity(), 0u);
  std::vector<std::byte> a = Buffer(1000);
  const std::byte* memory = a.data();
  pool.Give(std::move(a));
  std::vector<std::byte> again = pool.Take();
  EXPECT_EQ(again.data(), memory);
  EXPECT_EQ(again.size(), 1000u);
  pool.Give(std::move(again));
  pool.Give(Buffer(10));
  pool.Give(Buffer(20));  // a third: freed
  EXPECT_EQ(pool.Take().size(), 10u);
  EXPECT_EQ(pool.Take().size(), 1000u);
  EXPECT_EQ(pool.Take().capacity(), 0u);
}

// A pool that is gone leaves its buffers to the next pool of the process.
TEST(ArrowBufferPoolTest, AGonePoolLeavesItsBuffersToTheNext) {
  DrainIdleBuffers();
  const std::byte* memory = nullptr;
  {
    ArrowBufferPool first(4);
    std::vector<std::byte> buffer = Buffer(4096);
    memory = buffer.data();
    first.Give(std::move(buffer));
  }
  EXPECT_GE(ArrowBufferPool::IdleBytes(), 4096u);
  ArrowBufferPool next(4);
  std::vector<std::byte> taken = next.Take();
  EXPECT_EQ(taken.data(), memory);
  EXPECT_EQ(ArrowBufferPool::IdleBytes(), 0u);
}

// The idle cache holds at most kIdleBufferBytes; what does not fit is
// freed.
TEST(ArrowBufferPoolTest, TheIdleCacheIsBounded) {
  DrainIdleBuffers();
  {
    ArrowBufferPool pool(8);
    for (int i = 0; i < 3; ++i) pool.Give(Buffer(kIdleBufferBytes / 2));
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
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&pool] {
        for (int i = 0; i < 1000; ++i) {
          std::vector<std::byte> buffer = pool.Take();
          if (buffer.empty()) buffer = Buffer(64);
          pool.Give(std::move(buffer));
        }
      });
    }
  }
  size_t kept = 0;
  while (pool.Take().size() == 64) ++kept;
  EXPECT_GE(kept, 1u);
  EXPECT_LE(kept, 16u);
}

}  // namespace
}  // namespace sluice
