#include "engine/batch_buffer_pool.h"

#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(BatchBufferPoolTest, BuffersAreAlignedAndRecycled) {
  auto pool = BatchBufferPool::Create(1000, 2);
  void* first = pool->Acquire();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  EXPECT_EQ(pool->allocated_buffers(), 1u);
  pool->Release(first);
  EXPECT_EQ(pool->free_buffers(), 1u);
  EXPECT_EQ(pool->Acquire(), first);
  EXPECT_EQ(pool->free_buffers(), 0u);
  pool->Release(first);
}

TEST(BatchBufferPoolTest, KeepsAtMostMaxFreeBuffers) {
  auto pool = BatchBufferPool::Create(64, 1);
  void* a = pool->Acquire();
  void* b = pool->Acquire();
  ASSERT_TRUE(a != nullptr && b != nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(pool->allocated_buffers(), 2u);
  pool->Release(a);
  pool->Release(b);
  EXPECT_EQ(pool->free_buffers(), 1u);
  EXPECT_EQ(pool->allocated_buffers(), 1u);  // the other one was freed
}

TEST(BatchBufferPoolTest, ThreadsShareOnePool) {
  auto pool = BatchBufferPool::Create(4096, 4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool] {
      for (int i = 0; i < 1000; ++i) {
        void* buffer = pool->Acquire();
        static_cast<char*>(buffer)[4095] = 1;
        pool->Release(buffer);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(pool->allocated_buffers(), 4u);
  EXPECT_EQ(pool->free_buffers(), pool->allocated_buffers());
}

}  // namespace
}  // namespace sluice
