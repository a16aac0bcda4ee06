// The fio comparison of `sluice bench io --compare-fio`: fio's command line
// matches sluice's measurement (same file, block, depth, cache, duration,
// fadvise, CPU, registration), fio accepts it, both tools read the file,
// and the cases and their rounds are summed up by median and range.
#include "bindings/cli/fio_comparison.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bindings/cli/fio_rounds.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice::cli {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsSupersetOf;
using ::testing::Not;

TEST(FioArgumentsTest, WarmRunsKeepThePageCacheForTheGivenTime) {
  const std::vector<std::string> args = FioArguments({.path = "/data/a b.tar",
                                                      .block_bytes = 1 << 20,
                                                      .queue_depth = 32,
                                                      .cache = FioCache::kWarm,
                                                      .seconds = 3,
                                                      .cpu = 1});
  EXPECT_EQ(args, (std::vector<std::string>{
                      "fio", "--name=sluice-compare",
                      "--filename=/data/a b.tar", "--rw=read", "--bs=1048576",
                      "--ioengine=io_uring", "--iodepth=32", "--direct=0",
                      "--fadvise_hint=1", "--iomem=mmap", "--numjobs=1",
                      "--output-format=json", "--cpus_allowed=1",
                      "--invalidate=0", "--time_based", "--runtime=3"}));
}

TEST(FioArgumentsTest, ColdRunsDropThePageCacheBeforeEveryPass) {
  const std::vector<std::string> args =
      FioArguments({.path = "/f",
                    .block_bytes = 65536,
                    .queue_depth = 1,
                    .cache = FioCache::kCold,
                    .passes = 7,
                    .region_bytes = uint64_t{1} << 30});
  EXPECT_THAT(args,
              IsSupersetOf({"--invalidate=1", "--loops=7", "--bs=65536",
                            "--iodepth=1", "--direct=0", "--size=1073741824"}));
  EXPECT_THAT(args, Not(Contains("--time_based")));
  EXPECT_THAT(args, Not(Contains("--invalidate=0")));
  EXPECT_THAT(args, Not(Contains(::testing::StartsWith("--cpus_allowed"))));
}

TEST(FioArgumentsTest, DirectAndRegisteredRuns) {
  const std::vector<std::string> args =
      FioArguments({.path = "/f",
                    .cache = FioCache::kDirect,
                    .registered = true,
                    .seconds = 2});
  EXPECT_THAT(args,
              IsSupersetOf({"--direct=1", "--fixedbufs", "--registerfiles",
                            "--time_based", "--runtime=2"}));
  // sluice's default path changes only sluice's side.
  EXPECT_EQ(FioArguments({.path = "/f", .sluice_default_path = true}),
            FioArguments({.path = "/f"}));
}

TEST(ColdPassesTest, ReadAtLeast256MiBInAll) {
  EXPECT_EQ(ColdPasses(4 << 20), 64);
  EXPECT_EQ(ColdPasses((4 << 20) + 1), 64);
  EXPECT_EQ(ColdPasses(uint64_t{1} << 30), 1);
  EXPECT_EQ(ColdPasses(1000), 200);
  EXPECT_EQ(ColdPasses(0), 1);
  EXPECT_EQ(ColdRegionBytes(uint64_t{1} << 30), 0u);
  EXPECT_EQ(ColdRegionBytes(uint64_t{5} << 30), uint64_t{1} << 30);
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

TEST(SpreadOfTest, MedianAndRange) {
  const Spread odd = SpreadOf({3, 1, 2});
  EXPECT_EQ(odd.median, 2);
  EXPECT_EQ(odd.low, 1);
  EXPECT_EQ(odd.high, 3);
  EXPECT_EQ(SpreadOf({4, 1, 2, 3}).median, 2.5);
  EXPECT_EQ(SpreadOf({}).median, 0);
}

std::vector<std::string> CaseLabels(const std::vector<FioCase>& cases) {
  std::vector<std::string> labels;
  for (const FioCase& c : cases) {
    labels.push_back(std::to_string(c.job.block_bytes >> 10) + "K/" +
                     std::to_string(c.job.queue_depth) + "/" + c.label);
  }
  return labels;
}

TEST(FioCasesTest, EveryCaseAtBothBlockSizesUnlessRuledOut) {
  FioCaseSettings settings{.path = "/f",
                           .file_bytes = uint64_t{2} << 30,
                           .queue_depth = 16,
                           .cpu = 1};
  const std::vector<FioCase> all = FioCases(settings);
  ASSERT_EQ(all.size(), 14u);
  EXPECT_THAT(CaseLabels(all),
              IsSupersetOf({"1024K/16/cold", "1024K/16/direct-registered",
                            "64K/1/warm-default-path", "64K/1/cold"}));
  for (const FioCase& c : all) {
    EXPECT_EQ(c.job.cpu, 1);
    EXPECT_EQ(c.job.region_bytes, uint64_t{1} << 30);  // the first GiB
    EXPECT_EQ(c.job.passes, 1);
  }
  settings.cold = false;
  settings.direct = false;
  settings.registered = false;
  EXPECT_THAT(CaseLabels(FioCases(settings)),
              ElementsAre("1024K/16/warm", "1024K/16/warm-default-path",
                          "64K/1/warm", "64K/1/warm-default-path"));
  settings.file_bytes = 100 << 10;  // under one 1 MiB block
  settings.only = {"warm"};
  EXPECT_THAT(CaseLabels(FioCases(settings)), ElementsAre("64K/1/warm"));
}

// Each case may take its timed seconds, or its cold bytes at a slow
// disk's rate, and a minute more; past that the comparison stops.
TEST(FioCasesTest, EachCaseHasADeadlineBeyondItsExpectedTime) {
  FioCaseSettings settings{.path = "/f",
                           .file_bytes = uint64_t{2} << 30,
                           .seconds = 3,
                           .only = {"cold", "warm"}};
  const std::vector<FioCase> cases = FioCases(settings);
  ASSERT_EQ(cases.size(), 4u);
  for (const FioCase& c : cases) {
    if (c.label == "cold") {
      // One pass over the first GiB at 4 MB/s, and a minute.
      EXPECT_EQ(c.deadline,
                absl::Seconds((uint64_t{1} << 30) / 4e6) + absl::Minutes(1));
    } else {
      EXPECT_EQ(c.deadline, absl::Seconds(3) + absl::Minutes(1));
    }
  }
}

// fio itself accepts the command lines built for every kind of case, and
// both tools read the file.
TEST(RunFioTest, FioAndSluiceMeasureTheSameFile) {
  if (!FioInstalled()) {
    GTEST_SKIP() << "fio is not installed (scripts/setup.sh installs it)";
  }
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "fio_comparison_test.bin")
          .string();
  std::ofstream(path) << std::string((4 << 20) + 100, 'x');
  const FioJob base{.path = path,
                    .block_bytes = 64 << 10,
                    .queue_depth = 4,
                    .seconds = 1,
                    .passes = 2,
                    .cpu = ComparisonCpu()};
  struct Case {
    FioCache cache;
    bool registered;
    bool default_path;
  };
  for (const Case& c :
       {Case{FioCache::kCold, false, false}, Case{FioCache::kWarm, true, false},
        Case{FioCache::kDirect, true, false},
        Case{FioCache::kWarm, false, true}}) {
    FioJob job = base;
    job.cache = c.cache;
    job.registered = c.registered;
    job.sluice_default_path = c.default_path;
    SCOPED_TRACE(std::string(FioCacheName(c.cache)) +
                 (c.registered ? " registered" : "") +
                 (c.default_path ? " default path" : ""));
    absl::StatusOr<double> sluice = RunSluice(job);
    if (!sluice.ok() && (absl::IsFailedPrecondition(sluice.status()) ||
                         absl::IsUnimplemented(sluice.status()))) {
      // O_DIRECT or registered buffers unavailable here: fio must not be
      // asked either (the comparison leaves the case out, saying why).
      continue;
    }
    ASSERT_TRUE(sluice.ok()) << sluice.status();
    EXPECT_GT(*sluice, 0);
    if (c.default_path) continue;  // fio's side is the plain warm case
    absl::StatusOr<double> fio = RunFio(job);
    ASSERT_TRUE(fio.ok()) << fio.status();
    EXPECT_GT(*fio, 0);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace sluice::cli
