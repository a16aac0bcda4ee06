// The fio comparison of `sluice bench io --compare-fio`: fio's command line
// matches sluice's measurement (same file, block, depth, cache, duration),
// fio accepts it, and its JSON is read.
#include "bindings/cli/fio_comparison.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice::cli {
namespace {

using ::testing::Contains;
using ::testing::Not;

TEST(FioArgumentsTest, WarmRunsKeepThePageCacheForTheGivenTime) {
  const std::vector<std::string> args = FioArguments({.path = "/data/a b.tar",
                                                      .block_bytes = 1 << 20,
                                                      .queue_depth = 32,
                                                      .warm = true,
                                                      .seconds = 3});
  EXPECT_EQ(args, (std::vector<std::string>{
                      "fio", "--name=sluice-compare",
                      "--filename=/data/a b.tar", "--rw=read", "--bs=1048576",
                      "--ioengine=io_uring", "--iodepth=32", "--direct=0",
                      "--numjobs=1", "--output-format=json", "--invalidate=0",
                      "--time_based", "--runtime=3"}));
}

TEST(FioArgumentsTest, ColdRunsDropThePageCacheBeforeEveryPass) {
  const std::vector<std::string> args = FioArguments({.path = "/f",
                                                      .block_bytes = 65536,
                                                      .queue_depth = 1,
                                                      .warm = false,
                                                      .passes = 7});
  EXPECT_THAT(args, Contains("--invalidate=1"));
  EXPECT_THAT(args, Contains("--loops=7"));
  EXPECT_THAT(args, Contains("--bs=65536"));
  EXPECT_THAT(args, Contains("--iodepth=1"));
  EXPECT_THAT(args, Not(Contains("--time_based")));
  EXPECT_THAT(args, Not(Contains("--invalidate=0")));
}

TEST(ColdPassesTest, ReadAtLeast256MiBInAll) {
  EXPECT_EQ(ColdPasses(4 << 20), 64);
  EXPECT_EQ(ColdPasses((4 << 20) + 1), 64);
  EXPECT_EQ(ColdPasses(uint64_t{1} << 30), 1);
  EXPECT_EQ(ColdPasses(1000), 200);
  EXPECT_EQ(ColdPasses(0), 1);
}

TEST(ParseFioReadBandwidthTest, ReadsTheFirstJobsReadBandwidth) {
  absl::StatusOr<double> gbps = ParseFioReadBandwidth(
      "note: both iodepth >= 1 and synchronous I/O engine are selected\n"
      R"({"fio version": "fio-3.33", "jobs": [{"jobname": "sluice-compare",
          "read": {"io_bytes": 1, "bw_bytes": 5100000000, "bw": 4980468},
          "write": {"bw_bytes": 0}}]})");
  ASSERT_TRUE(gbps.ok()) << gbps.status();
  EXPECT_DOUBLE_EQ(*gbps, 5.1);
  EXPECT_FALSE(ParseFioReadBandwidth("fio: option not found").ok());
  EXPECT_FALSE(ParseFioReadBandwidth(R"({"jobs": []})").ok());
  EXPECT_FALSE(ParseFioReadBandwidth(R"({"jobs": [{"read": {}}]})").ok());
  EXPECT_FALSE(ParseFioReadBandwidth("{ not json").ok());
}

// fio itself accepts the command line built for both cache states, and both
// tools read the file.
TEST(RunFioTest, FioAndSluiceMeasureTheSameFile) {
  if (!FioInstalled()) {
    GTEST_SKIP() << "fio is not installed (scripts/setup.sh installs it)";
  }
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "fio_comparison_test.bin")
          .string();
  std::ofstream(path) << std::string(8 << 20, 'x');
  for (const bool warm : {false, true}) {
    SCOPED_TRACE(warm ? "warm" : "cold");
    const FioJob job{.path = path,
                     .block_bytes = 64 << 10,
                     .queue_depth = 4,
                     .warm = warm,
                     .seconds = 1,
                     .passes = 2};
    absl::StatusOr<double> fio = RunFio(job);
    ASSERT_TRUE(fio.ok()) << fio.status();
    EXPECT_GT(*fio, 0);
    absl::StatusOr<double> sluice = RunSluice(job);
    ASSERT_TRUE(sluice.ok()) << sluice.status();
    EXPECT_GT(*sluice, 0);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace sluice::cli
