#include "bindings/cli/gen_command.h"

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

struct GenResult {
  int code;
  std::string out;
  std::string err;
};

GenResult Gen(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunGenCommand(args, out, err);
  return {code, out.str(), err.str()};
}

fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / ("gen_command_" + name);
  fs::remove_all(dir);
  return dir;
}

TEST(GenCommandTest, WritesTarsAndReports) {
  const fs::path dir = FreshDir("tar");
  GenResult run = Gen({"tar", dir.string(), "--games", "3", "--games-per-tar=2",
                       "--format", "3", "--version", "5", "--seed", "8"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(fs::exists(dir / "training-run1-test80-20250101-0000.tar"));
  EXPECT_TRUE(fs::exists(dir / "training-run1-test80-20250101-0100.tar"));
  EXPECT_THAT(run.out, HasSubstr("2 files, 3 games"));
  EXPECT_THAT(run.out, HasSubstr("(V5, format 3)"));
  EXPECT_THAT(run.out, HasSubstr("ratio"));
}

TEST(GenCommandTest, WritesLooseChunks) {
  const fs::path dir = FreshDir("loose");
  GenResult run = Gen({"loose", dir.string(), "--games", "2"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(fs::exists(dir / "training.100000000.gz"));
  EXPECT_TRUE(fs::exists(dir / "training.100000001.gz"));
  EXPECT_THAT(run.out, HasSubstr("2 files, 2 games"));
}

TEST(GenCommandTest, HelpPrintsUsage) {
  GenResult run = Gen({"--help"});
  EXPECT_EQ(run.code, 0);
  EXPECT_THAT(run.out, HasSubstr("usage: sluice gen"));
  EXPECT_THAT(run.out, HasSubstr("sluice gen arrow --help"));
  EXPECT_THAT(run.out, HasSubstr("sluice gen audio --help"));
}

// Every usage error is one line on stderr and exit code 2, nothing written.
TEST(GenCommandTest, UsageErrorsAreOneLine) {
  const std::string dir = FreshDir("errors").string();
  const std::vector<std::vector<std::string>> bad = {
      {"tar", dir, "--games", "2", "--bogus", "1"},
      {"tar", dir, "--games", "zero"},
      {"tar", dir, "--games", "0"},
      {"tar", dir, "--games", "2", "--format", "2"},
      {"tar", dir, "--games", "2", "--version", "7"},
      {"tar", dir, "--games", "2", "--version", "4", "--format", "3"},
      {"tar", dir, "--games"},
      {"tar", dir},
      {"zip", dir, "--games", "2"},
      {"tar", "--games", "2"},
      {"tar", dir, "--games", "2", "--games", "3"},
      {"tar", dir, "-g", "2"},
  };
  for (const std::vector<std::string>& args : bad) {
    GenResult run = Gen(args);
    SCOPED_TRACE(run.err);
    EXPECT_EQ(run.code, 2);
    EXPECT_EQ(run.out, "");
    EXPECT_THAT(run.err, MatchesRegex("sluice gen: [^\n]+\n"));
  }
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace sluice::cli
