#include "stages/generic/file_path_provider.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing::ParseConfig;
using testing::StageTotals;
using testing::TempDir;
using testing::WaitUntil;
using testing::WriteFile;
using testing::WriteFileAtomically;

std::string Config(const std::string& dir, const std::string& mode) {
  return "worker_threads: 2 metrics_interval_seconds: 0.02 "
         "stage { name: 'files' file_path_provider { directory: '" +
         dir + "' mode: " + mode + " } }";
}

// The next item, failing the test on a timeout.
std::optional<DiscoveredFile> Next(DataLoader& loader) {
  auto result = loader.GetNextFor<DiscoveredFile>("", std::chrono::seconds(60));
  EXPECT_NE(result.kind, Channel<DiscoveredFile>::GetResult::Kind::kTimeout);
  return std::move(result.item);
}

// Reads items up to and including the end-of-scan marker; returns the paths.
std::set<std::string> InitialScan(DataLoader& loader) {
  std::set<std::string> paths;
  while (std::optional<DiscoveredFile> file = Next(loader)) {
    if (file->phase == DiscoveryPhase::kInitialScanComplete) break;
    EXPECT_EQ(file->phase, DiscoveryPhase::kInitialScan);
    paths.insert(file->path);
  }
  return paths;
}

TEST(FilePathProviderTest, OnceModeScansRecursivelyThenCloses) {
  TempDir dir;
  std::filesystem::create_directories(dir / "sub/deeper");
  WriteFile(dir / "a.tar", "a");
  WriteFile(dir / "sub/b.gz", "b");
  WriteFile(dir / "sub/deeper/c.gz", "c");
  WriteFile(dir / ".hidden.gz", "h");
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(Config(dir.path(), "ONCE")));
  loader.Start();
  EXPECT_EQ(InitialScan(loader),
            (std::set<std::string>{dir / "a.tar", dir / "sub/b.gz",
                                   dir / "sub/deeper/c.gz"}));
  EXPECT_EQ(Next(loader), std::nullopt);  // end of stream
  loader.Stop();
  const StageMetricProto totals = StageTotals(loader, "files");
  EXPECT_EQ(totals.file_path_provider().files_offered(), 3u);
  EXPECT_EQ(totals.file_path_provider().initial_scan_complete(), 1u);
  EXPECT_EQ(totals.file_path_provider().initial_scan_files(), 3u);
}

TEST(FilePathProviderTest, WatchOffersCompleteNewFilesOnly) {
  TempDir dir;
  WriteFile(dir / "old.tar", "x");
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(Config(dir.path(), "WATCH")));
  loader.Start();
  EXPECT_EQ(InitialScan(loader), (std::set<std::string>{dir / "old.tar"}));

  // Renamed into place: offered once, under its final name.
  WriteFileAtomically(dir / "renamed.gz", "r");
  std::optional<DiscoveredFile> file = Next(loader);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->path, dir / "renamed.gz");
  EXPECT_EQ(file->phase, DiscoveryPhase::kNew);

  // Written slowly in place: not offered while open for writing. A file
  // written after the first half must come out first.
  const int fd = ::open((dir / "slow.tar").c_str(),
                        O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "first half", 10), 10);
  WriteFileAtomically(dir / "marker.gz", "m");
  file = Next(loader);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->path, dir / "marker.gz");
  ASSERT_EQ(::write(fd, "second half", 11), 11);
  ::close(fd);
  file = Next(loader);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->path, dir / "slow.tar");

  // A new subdirectory is watched; files in it are offered.
  std::filesystem::create_directory(dir / "newdir");
  ASSERT_TRUE(WaitUntil([&] {
    return StageTotals(loader, "files")
               .file_path_provider()
               .directories_watched() == 2;
  }));
  WriteFileAtomically(dir / "newdir/inner.gz", "i");
  file = Next(loader);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->path, dir / "newdir/inner.gz");
  loader.Stop();  // returns although the stage waits for events
}

TEST(FilePathProviderTest, RemovedDirectoryIsCountedAndWatchingGoesOn) {
  TempDir dir;
  std::filesystem::create_directory(dir / "doomed");
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(Config(dir.path(), "WATCH")));
  loader.Start();
  EXPECT_TRUE(InitialScan(loader).empty());
  std::filesystem::remove_all(dir / "doomed");
  ASSERT_TRUE(WaitUntil([&] {
    return StageTotals(loader, "files")
               .file_path_provider()
               .directories_removed() == 1;
  }));
  WriteFileAtomically(dir / "after.gz", "a");
  std::optional<DiscoveredFile> file = Next(loader);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->path, dir / "after.gz");
  loader.Stop();
}

TEST(FilePathProviderTest, ConfigErrorsNameTheField) {
  DataLoader loader(CreateStage);
  try {
    loader.Configure(ParseConfig(
        "stage { name: 'files' file_path_provider { mode: ONCE } }"));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("file_path_provider.directory"));
  }
  DataLoader missing(CreateStage);
  EXPECT_THROW(missing.Configure(ParseConfig(Config("/nonexistent/x", "ONCE"))),
               ConfigError);
}

}  // namespace
}  // namespace sluice
