#include "engine/ring_queue.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(RingQueueTest, KeepsOrderAcrossWrapAroundAndGrowth) {
  RingQueue<int> queue;
  int next_in = 0;
  int next_out = 0;
  // Fill and drain in uneven steps, so the head wraps around the array
  // while it grows from 8 to 64 slots.
  for (int step = 1; step <= 40; ++step) {
    for (int i = 0; i < step % 7 + 2; ++i) queue.push_back(next_in++);
    for (int i = 0; i < step % 5 + 1 && !queue.empty(); ++i) {
      EXPECT_EQ(queue.front(), next_out++);
      queue.pop_front();
    }
    EXPECT_EQ(queue.size(), static_cast<size_t>(next_in - next_out));
  }
  while (!queue.empty()) {
    EXPECT_EQ(queue.front(), next_out++);
    queue.pop_front();
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(RingQueueTest, HoldsMoveOnlyItemsAndDestroysThemOnPopAndClear) {
  auto shared = std::make_shared<int>(7);
  RingQueue<std::unique_ptr<std::shared_ptr<int>>> queue;
  for (int i = 0; i < 20; ++i) {
    queue.push_back(std::make_unique<std::shared_ptr<int>>(shared));
  }
  EXPECT_EQ(shared.use_count(), 21);
  queue.pop_front();
  EXPECT_EQ(shared.use_count(), 20);
  queue.clear();
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(shared.use_count(), 1);
  queue.push_back(std::make_unique<std::shared_ptr<int>>(shared));
  EXPECT_EQ(**queue.front(), 7);
}

}  // namespace
}  // namespace sluice
