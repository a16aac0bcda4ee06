// Fault injection with the real lc0 pipelines on generated data: files
// deleted, truncated or replaced while the training pipeline reads them,
// watched directories removed, read errors (AsyncFileReader's fault hook)
// and the io_uring fallback giving the same positions as io_uring.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "engine/data_loader.h"
#include "gtest/gtest.h"
#include "io/async_file_reader.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/stage_factory.h"
#include "tests/reliability/data_set.h"
#include "tests/stages/lc0/chunk_test_util.h"
#include "tests/stages/lc0/frame_test_util.h"

namespace sluice::lc0 {
namespace {

using ::sluice::lc0::testing::AddCounts;
using ::sluice::lc0::testing::CountPositions;
using ::sluice::lc0::testing::DataSet;
using ::sluice::lc0::testing::ExampleConfig;
using ::sluice::lc0::testing::HashCounts;
using ::sluice::lc0::testing::kGamesPerTar;
using ::sluice::lc0::testing::SmallTrainConfig;
using ::sluice::lc0::testing::StageTotals;
using ::sluice::lc0::testing::TempDir;
using ::sluice::lc0::testing::WaitUntil;
using ::sluice::lc0::testing::WriteDataSet;

// 3 tars of kGamesPerTar games (seed 5) and 4 loose games (seed 6) in `dir`.
DataSet WriteMixedDataSet(const std::string& dir) {
  DataSet set = WriteDataSet(5, {.mode = OutputMode::kTar,
                                 .dir = dir,
                                 .games = 3 * kGamesPerTar,
                                 .games_per_tar = kGamesPerTar});
  DataSet loose =
      WriteDataSet(6, {.mode = OutputMode::kLoose, .dir = dir, .games = 4});
  set.paths.insert(set.paths.end(), loose.paths.begin(), loose.paths.end());
  set.by_file.merge(loose.by_file);
  AddCounts(loose.all, &set.all);
  set.positions += loose.positions;
  return set;
}

// Count of skip `reason` in the totals of stage `name`.
uint64_t Skipped(DataLoader& loader, const std::string& name,
                 const std::string& reason) {
  const StageMetricProto totals = StageTotals(loader, name);
  for (const SkipCountProto& skip : totals.skipped()) {
    if (skip.reason() == reason) return skip.count();
  }
  return 0;
}

// Pulls one batch, failing the test if none comes within a generous bound.
void PullOne(DataLoader& loader) {
  auto result = loader.GetNextFor<TypedBatch>("", std::chrono::seconds(60));
  ASSERT_EQ(result.kind, Channel<TypedBatch>::GetResult::Kind::kItem);
}

TEST(DamagedInputTest, TrainingGoesOnWhenFilesAreDeletedTruncatedOrReplaced) {
  TempDir dir;
  const DataSet set = WriteMixedDataSet(dir.path());
  DataLoader loader(CreateStage);
  loader.Configure(SmallTrainConfig(dir.path(), 256));
  loader.Start();
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(PullOne(loader));
  // Tar 0 loses its tail, tar 1 is overwritten in place with zeros, tar 2
  // is replaced (rename) by other games, a loose game is deleted.
  std::filesystem::resize_file(set.paths[0], 3000);
  const uintmax_t size = std::filesystem::file_size(set.paths[1]);
  testing::WriteFile(set.paths[1], std::string(size, '\0'));
  const std::string replacement = dir / "replacement";
  WriteDataSet(7, {.mode = OutputMode::kTar,
                   .dir = replacement,
                   .games = kGamesPerTar,
                   .games_per_tar = kGamesPerTar});
  std::filesystem::rename(
      std::filesystem::directory_iterator(replacement)->path(), set.paths[2]);
  std::filesystem::remove(set.paths[3]);  // the first loose game
  // The pool starts pass after pass over its window, so every damaged
  // chunk is met again; batches keep coming meanwhile.
  const bool counted = WaitUntil([&] {
    PullOne(loader);
    if (::testing::Test::HasFatalFailure()) return true;
    return Skipped(loader, "pool", "file_truncated") > 0 &&
           Skipped(loader, "pool", "not_gzip") > 0;
  });
  EXPECT_TRUE(counted);
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(PullOne(loader));
  loader.Stop();
  EXPECT_EQ(loader.GetMetrics().error(), "");
}

TEST(DamagedInputTest, TrainingGoesOnWhenWatchedDirectoriesAreRemoved) {
  TempDir dir;
  WriteDataSet(5, {.mode = OutputMode::kTar,
                   .dir = dir / "data",
                   .games = 2 * kGamesPerTar,
                   .games_per_tar = kGamesPerTar});
  // A directory without chunk files (the pool keeps chunk files open, and
  // an open file pins its removed directory until it is closed).
  std::filesystem::create_directory(dir / "doomed");
  testing::WriteFile(dir / "doomed/notes.txt", "not a chunk");
  DataLoader loader(CreateStage);
  loader.Configure(SmallTrainConfig(dir.path(), 256));
  loader.Start();
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(PullOne(loader));
  std::filesystem::remove_all(dir / "doomed");
  ASSERT_TRUE(WaitUntil([&] {
    return StageTotals(loader, "files")
               .file_path_provider()
               .directories_removed() >= 1;
  }));
  // New data in a new subdirectory is still found.
  WriteDataSet(6, {.mode = OutputMode::kLoose, .dir = dir / "new", .games = 2});
  ASSERT_TRUE(WaitUntil([&] {
    return StageTotals(loader, "files").file_path_provider().files_offered() >=
           5;
  }));
  // The watched root goes with every file: the open files keep feeding
  // batches.
  std::filesystem::remove_all(dir.path());
  for (int i = 0; i < 5; ++i) ASSERT_NO_FATAL_FAILURE(PullOne(loader));
  loader.Stop();
  std::filesystem::create_directory(dir.path());  // for TempDir's cleanup
}

// Paths whose reads fail with EIO while installed.
std::set<std::string>* poisoned_paths = nullptr;

std::optional<int> FailPoisonedReads(int fd, uint64_t) {
  char target[PATH_MAX];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t length = readlink(link.c_str(), target, sizeof target);
  if (length <= 0) return std::nullopt;
  if (poisoned_paths->contains(std::string(target, length))) return EIO;
  return std::nullopt;
}

TEST(DamagedInputTest, ReadErrorsSkipTheirFilesAndEveryOtherPositionArrives) {
  TempDir dir;
  const DataSet set = WriteMixedDataSet(dir.path());
  // A tar (read while indexing) and a loose game (read as a chunk).
  std::set<std::string> poisoned = {set.paths[1], set.paths[4]};
  HashCounts expected;
  for (const std::string& path : set.paths) {
    if (!poisoned.contains(path)) AddCounts(set.by_file.at(path), &expected);
  }
  poisoned_paths = &poisoned;
  io::AsyncFileReader::SetFaultInjectorForTesting(FailPoisonedReads);
  DataLoader loader(CreateStage);
  DataLoaderConfig config = ExampleConfig("lc0_eval", dir.path());
  config.set_worker_threads(2);
  loader.Configure(config);
  loader.Start();
  HashCounts seen;
  CountPositions(loader, "", &seen);
  loader.Stop();
  io::AsyncFileReader::SetFaultInjectorForTesting(nullptr);
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(Skipped(loader, "pool", "read_error"), 2u);
  EXPECT_EQ(loader.GetMetrics().error(), "");
}

// Runs the eval example over `dir`; returns the positions and the backend.
HashCounts RunEval(const std::string& dir, bool use_io_uring,
                   std::string* backend) {
  DataLoader loader(CreateStage);
  DataLoaderConfig config = ExampleConfig("lc0_eval", dir);
  config.set_worker_threads(2);
  config.set_use_io_uring(use_io_uring);
  loader.Configure(config);
  loader.Start();
  HashCounts seen;
  CountPositions(loader, "", &seen);
  loader.Stop();
  *backend = loader.GetMetrics().io_backend();
  return seen;
}

TEST(DamagedInputTest, FallbackWithoutIoUringGivesTheSamePositions) {
  TempDir dir;
  const DataSet set = WriteMixedDataSet(dir.path());
  std::string uring_backend, fallback_backend;
  const HashCounts with_uring = RunEval(dir.path(), true, &uring_backend);
  const HashCounts without = RunEval(dir.path(), false, &fallback_backend);
  EXPECT_EQ(with_uring, set.all);
  EXPECT_EQ(without, set.all);
  EXPECT_EQ(fallback_backend, "pread-threads");
  if (uring_backend != "io_uring") {
    GTEST_SKIP() << "io_uring unavailable here (" << uring_backend
                 << "): both runs used the fallback";
  }
}

}  // namespace
}  // namespace sluice::lc0
