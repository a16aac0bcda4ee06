// DeadlineWatchdog: a scope that outlives its deadline ends the process
// with a message naming it; one that finishes in time disarms it at once.
#include "bindings/cli/deadline_watchdog.h"

#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace sluice::cli {
namespace {

TEST(DeadlineWatchdogDeathTest, ALateScopeEndsTheProcessNamingIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const DeadlineWatchdog watchdog("the stuck reader",
                                        absl::Milliseconds(50));
        std::this_thread::sleep_for(std::chrono::minutes(10));
      },
      ::testing::ExitedWithCode(kDeadlineExitStatus),
      "sluice: the stuck reader did not finish within 50ms; stopping");
}

TEST(DeadlineWatchdogTest, AScopeThatFinishesInTimeDisarmsIt) {
  int finished = 0;
  for (int i = 0; i < 3; ++i) {
    // Leaving the scope does not wait for the hour to pass.
    const DeadlineWatchdog watchdog("a quick step", absl::Hours(1));
    ++finished;
  }
  EXPECT_EQ(finished, 3);
}

}  // namespace
}  // namespace sluice::cli
