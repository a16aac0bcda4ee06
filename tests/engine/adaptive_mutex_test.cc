#include "engine/adaptive_mutex.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(AdaptiveMutexTest, ExcludesOtherThreads) {
  AdaptiveMutex mu;
  int64_t counter = 0;  // a data race without the mutex (TSan would say)
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        std::lock_guard lock(mu);
        ++counter;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter, 4 * 20000);
}

TEST(AdaptiveMutexTest, TryLockFailsWhileAnotherThreadHoldsIt) {
  AdaptiveMutex mu;
  std::unique_lock held(mu);
  bool taken = true;
  std::thread([&] { taken = mu.try_lock(); }).join();
  EXPECT_FALSE(taken);
  held.unlock();
  std::thread([&] {
    taken = mu.try_lock();
    if (taken) mu.unlock();
  }).join();
  EXPECT_TRUE(taken);
}

TEST(AdaptiveMutexTest, WaitsWithAConditionVariable) {
  AdaptiveMutex mu;
  std::condition_variable_any ready_changed;
  bool ready = false;
  std::thread setter([&] {
    std::lock_guard lock(mu);
    ready = true;
    ready_changed.notify_one();
  });
  {
    std::unique_lock lock(mu);
    EXPECT_TRUE(ready_changed.wait_for(lock, std::chrono::seconds(60),
                                       [&] { return ready; }));
  }
  setter.join();
}

}  // namespace
}  // namespace sluice
