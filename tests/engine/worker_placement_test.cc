#include "engine/worker_placement.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "asio/post.hpp"
#include "engine/executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;

TEST(PinnedCpusTest, AutoPinsOnlyAWorkerPerAllowedCpu) {
  const std::vector<int> allowed = {2, 5, 7};
  EXPECT_THAT(PinnedCpus(WorkerPlacement::kAuto, 3, allowed, 0),
              ElementsAre(2, 5, 7));
  EXPECT_THAT(PinnedCpus(WorkerPlacement::kAuto, 2, allowed, 0), IsEmpty());
  EXPECT_THAT(PinnedCpus(WorkerPlacement::kAuto, 4, allowed, 0), IsEmpty());
}

TEST(PinnedCpusTest, AutoFloatsInANicedProcess) {
  const std::vector<int> allowed = {0, 1};
  EXPECT_THAT(PinnedCpus(WorkerPlacement::kAuto, 2, allowed, 5), IsEmpty());
  EXPECT_THAT(PinnedCpus(WorkerPlacement::kAuto, 2, allowed, -5),
              ElementsAre(0, 1));
}

TEST(PinnedCpusTest, PinnedGoesRoundTheAllowedCpus) {
  const std::vector<int> allowed = {2, 5};
  EXPECT_THAT(PinnedCpus(WorkerPlacement::kPinned, 1, allowed, 0),
              ElementsAre(2));
  EXPECT_THAT(PinnedCpus(WorkerPlacement::kPinned, 5, allowed, 10),
              ElementsAre(2, 5, 2, 5, 2));
}

TEST(PinnedCpusTest, FloatingNeverPins) {
  const std::vector<int> allowed = {0, 1};
  EXPECT_THAT(PinnedCpus(WorkerPlacement::kFloating, 2, allowed, 0), IsEmpty());
}

TEST(AllowedCpusTest, MatchesTheProcessAffinity) {
  const std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  EXPECT_TRUE(std::is_sorted(cpus.begin(), cpus.end()));
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(mask), &mask), 0);
  EXPECT_EQ(cpus.size(), static_cast<size_t>(CPU_COUNT(&mask)));
  for (int cpu : cpus) EXPECT_TRUE(CPU_ISSET(cpu, &mask)) << cpu;
}

// The CPUs each worker thread of `executor` may run on, one entry per
// thread: a handler per thread, each holding its thread until all are in.
std::vector<std::vector<int>> WorkerAffinities(Executor& executor) {
  const unsigned threads = executor.threads();
  std::atomic<unsigned> arrived{0};
  std::atomic<unsigned> done{0};
  std::mutex mu;
  std::vector<std::vector<int>> affinities;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (unsigned i = 0; i < threads; ++i) {
    asio::post(executor.get(), [&] {
      ++arrived;
      while (arrived.load() < threads &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      cpu_set_t mask;
      CPU_ZERO(&mask);
      ::pthread_getaffinity_np(::pthread_self(), sizeof(mask), &mask);
      std::vector<int> cpus;
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
      }
      {
        const std::lock_guard lock(mu);
        affinities.push_back(std::move(cpus));
      }
      ++done;
    });
  }
  while (done.load() < threads && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::lock_guard lock(mu);
  return affinities;
}

TEST(ExecutorPlacementTest, PinnedWorkersRunEachOnTheirOwnCpu) {
  const std::vector<int> allowed = AllowedCpus();
  const unsigned threads =
      static_cast<unsigned>(std::min<size_t>(allowed.size(), 4));
  Executor executor(
      {.threads = threads, .placement = WorkerPlacement::kPinned});
  ASSERT_EQ(executor.pinned_cpus().size(), threads);
  executor.Start();
  const std::vector<std::vector<int>> affinities = WorkerAffinities(executor);
  executor.Stop();
  ASSERT_EQ(affinities.size(), threads);
  std::vector<int> cpus;
  for (const std::vector<int>& affinity : affinities) {
    ASSERT_EQ(affinity.size(), 1u);
    cpus.push_back(affinity.front());
  }
  EXPECT_THAT(cpus, UnorderedElementsAreArray(executor.pinned_cpus()));
  EXPECT_EQ(std::set<int>(cpus.begin(), cpus.end()).size(), threads);
}

TEST(ExecutorPlacementTest, FloatingWorkersKeepTheProcessAffinity) {
  const std::vector<int> allowed = AllowedCpus();
  Executor executor({.threads = static_cast<unsigned>(allowed.size()),
                     .placement = WorkerPlacement::kFloating});
  EXPECT_THAT(executor.pinned_cpus(), IsEmpty());
  executor.Start();
  const std::vector<std::vector<int>> affinities = WorkerAffinities(executor);
  executor.Stop();
  ASSERT_EQ(affinities.size(), allowed.size());
  for (const std::vector<int>& affinity : affinities) {
    EXPECT_EQ(affinity, allowed);
  }
}

TEST(ExecutorPlacementTest, ZeroThreadsMeansOnePerAllowedCpu) {
  Executor executor({.threads = 0});
  EXPECT_EQ(executor.threads(), AllowedCpus().size());
  // Pinned unless the test runs niced.
  EXPECT_EQ(executor.pinned_cpus(),
            ProcessNiceness() > 0 ? std::vector<int>() : AllowedCpus());
}

}  // namespace
}  // namespace sluice
