#include "bindings/cli/arrow_data.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "bindings/cli/bench_io.h"
#include "bindings/cli/gen_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice::cli {
namespace {

using ::testing::HasSubstr;

TEST(GenArrowTest, WritesFilesThatReadBackRowByRow) {
  sluice::testing::TempDir dir;
  std::ostringstream out, err;
  ASSERT_EQ(
      RunGenCommand({"arrow", dir.path(), "--rows", "1000", "--files", "3",
                     "--row-bytes", "100", "--rows-per-batch", "128"},
                    out, err),
      0)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("3 files, 1000 rows"));
  const std::vector<std::string> paths = {
      dir.path() + "/data-00001-of-00003.arrow",
      dir.path() + "/data-00002-of-00003.arrow",
      dir.path() + "/data-00003-of-00003.arrow"};
  for (const std::string& path : paths) EXPECT_TRUE(IsArrowFile(path));
  for (const bool io_uring : {true, false}) {
    absl::StatusOr<ArrowReadResult> read = MeasureArrowRead(paths, io_uring);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->rows, 1000);
    // 333, 333, 334 rows in batches of 128: 3 batches each.
    EXPECT_EQ(read->record_batches, 9);
  }
}

TEST(GenArrowTest, UsageErrors) {
  std::ostringstream out, err;
  EXPECT_EQ(RunGenCommand({"arrow", "/tmp/x"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--rows is required"));
  EXPECT_EQ(RunGenCommand({"arrow", "/tmp/x", "--rows", "0"}, out, err), 2);
  EXPECT_EQ(RunGenCommand({"arrow", "--help"}, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("usage: sluice gen arrow"));
}

TEST(BenchIoArrowTest, ReportsArrowRowsPerSecond) {
  sluice::testing::TempDir dir;
  std::ostringstream out, err;
  ASSERT_EQ(
      RunGenCommand({"arrow", dir.path(), "--rows", "300", "--row-bytes", "64"},
                    out, err),
      0);
  std::ostringstream bench_out;
  ASSERT_EQ(RunBenchIo({dir.path(), "--json"}, bench_out, err), 0) << err.str();
  EXPECT_THAT(bench_out.str(),
              HasSubstr("\"arrow\":{\"files\":1,\"rows\":300"));
}

}  // namespace
}  // namespace sluice::cli
