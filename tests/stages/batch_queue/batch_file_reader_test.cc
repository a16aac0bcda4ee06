#include "stages/batch_queue/batch_file_reader.h"

#include <stdlib.h>
#include <sys/mount.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/atomic_file.h"
#include "tests/stages/batch_queue/batch_queue_test_util.h"

namespace sluice::batch_queue {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::sluice::batch_queue::testing;  // NOLINT
using Kind = Channel<TypedBatch>::GetResult::Kind;
using lc0::testing::TempDir;

TEST(BatchFileReaderTest, ConfigErrors) {
  for (const char* text : {
           "stage { name: 'r' batch_file_reader { split: 'train' } }",
           "stage { name: 'r' batch_file_reader { root: '/x' } }",
           "stage { name: 'r' batch_file_reader { root: '/x' split: '../a' } }",
           "stage { name: 'r' batch_file_reader { root: '/x' split: 't' "
           "poll_interval_ms: 0 } }",
           "stage { name: 'r' batch_file_reader { root: '/x' split: 't' "
           "delete_attempts: 0 } }",
       }) {
    DataLoader loader(CreateStage);
    EXPECT_THROW(loader.Configure(lc0::testing::ParseConfig(text)), ConfigError)
        << text;
  }
}

TEST(BatchFileReaderTest, OrderAcrossFilesThenDeletes) {
  TempDir root;
  WriteMeta(root.path());
  const std::string dir = QueueDir(root.path(), "train");
  WriteFile(dir, 3, {5, 6}, /*timestamp_ms=*/2000);
  WriteFile(dir, 2, {3, 4}, /*timestamp_ms=*/2000);
  WriteFile(dir, 9, {1, 2}, /*timestamp_ms=*/1000);
  std::ofstream(dir + "/.3000-000010-1.safetensors.tmp") << "partial";
  auto loader = StartLoader(ReaderStage(root.path()));
  EXPECT_THAT(DrainIds(*loader), ElementsAre(1, 2, 3, 4, 5, 6));
  loader->Stop();
  EXPECT_THAT(Entries(dir), ElementsAre(".3000-000010-1.safetensors.tmp"));
  const StageMetricProto totals = lc0::testing::StageTotals(*loader, "reader");
  EXPECT_EQ(totals.batch_file_reader().files_consumed(), 3u);
  EXPECT_EQ(totals.batch_file_reader().batches_emitted(), 6u);
}

TEST(BatchFileReaderTest, BlocksWhileEmptyThenWakesForANewFile) {
  TempDir root;
  WriteMeta(root.path());
  const std::string dir = QueueDir(root.path(), "train");
  ASSERT_TRUE(MakeDirs(dir).ok());
  auto loader = StartLoader(ReaderStage(root.path(), "idle_timeout_ms: 0"));
  auto first =
      loader->GetNextFor<TypedBatch>("", std::chrono::milliseconds(50));
  EXPECT_EQ(first.kind, Kind::kTimeout);
  WriteFile(dir, 1, {7});
  auto second = loader->GetNextFor<TypedBatch>("", std::chrono::seconds(30));
  ASSERT_EQ(second.kind, Kind::kItem);
  EXPECT_EQ(BatchId(*second.item), 7);
}

// With `loader` waiting on an empty queue `dir`, writes a file there and
// expects its batch within 30 s.
void ExpectANewFileToArrive(DataLoader& loader, const std::string& dir) {
  EXPECT_EQ(
      loader.GetNextFor<TypedBatch>("", std::chrono::milliseconds(50)).kind,
      Kind::kTimeout);
  WriteFile(dir, 1, {7});
  auto next = loader.GetNextFor<TypedBatch>("", std::chrono::seconds(30));
  ASSERT_EQ(next.kind, Kind::kItem);
  EXPECT_EQ(BatchId(*next.item), 7);
}

TEST(BatchFileReaderTest, InotifyWakesTheReaderLongBeforeItsPoll) {
  TempDir root;
  WriteMeta(root.path());
  const std::string dir = QueueDir(root.path(), "train");
  ASSERT_TRUE(MakeDirs(dir).ok());
  // A 10-minute poll: only an inotify event can wake the reader in time.
  auto loader = StartLoader(absl::StrCat(
      "stage { name: 'reader' batch_file_reader { root: '", root.path(),
      "' split: 'train' poll_interval_ms: 600000 } }"));
  ExpectANewFileToArrive(*loader, dir);
}

TEST(BatchFileReaderTest, WithoutInotifyTheReaderPolls) {
  TempDir root;
  WriteMeta(root.path());
  const std::string dir = QueueDir(root.path(), "train");
  ASSERT_TRUE(MakeDirs(dir).ok());
  setenv("SLUICE_DISABLE_INOTIFY", "1", 1);
  auto loader = StartLoader(ReaderStage(root.path(), "idle_timeout_ms: 0"));
  unsetenv("SLUICE_DISABLE_INOTIFY");
  ExpectANewFileToArrive(*loader, dir);
}

TEST(BatchFileReaderTest, IdleTimeoutEndsTheStream) {
  TempDir root;
  WriteMeta(root.path());
  ASSERT_TRUE(MakeDirs(QueueDir(root.path(), "train")).ok());
  const auto start = std::chrono::steady_clock::now();
  auto loader = StartLoader(ReaderStage(root.path()));
  EXPECT_TRUE(DrainIds(*loader).empty());
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(300));
}

TEST(BatchFileReaderTest, CorruptFilesAreQuarantinedAndTheStreamGoesOn) {
  TempDir root;
  WriteMeta(root.path());
  const std::string dir = QueueDir(root.path(), "train");
  WriteFile(dir, 1, {1});
  const std::string truncated = WriteFile(dir, 2, {2, 3});
  std::filesystem::resize_file(
      dir + "/" + truncated,
      std::filesystem::file_size(dir + "/" + truncated) - 5);
  ASSERT_TRUE(WriteFileAtomically(dir, "1000-000003-1.safetensors",
                                  "not a safetensors file")
                  .ok());
  WriteFile(dir, 4, {4});
  auto loader = StartLoader(ReaderStage(root.path()));
  EXPECT_THAT(DrainIds(*loader), ElementsAre(1, 4));
  loader->Stop();
  EXPECT_TRUE(Entries(dir).empty());
  EXPECT_THAT(Entries(QuarantineDir(root.path())),
              ElementsAre("train-1000-000002-2.safetensors",
                          "train-1000-000003-1.safetensors"));
  const StageMetricProto totals = lc0::testing::StageTotals(*loader, "reader");
  ASSERT_EQ(totals.skipped_size(), 1);
  EXPECT_EQ(totals.skipped(0).reason(), "corrupt_file");
  EXPECT_EQ(totals.skipped(0).count(), 2u);
}

TEST(BatchFileReaderTest, WrongSchemaFailsNamingTheFieldAndKeepsTheFile) {
  TempDir root;
  WriteMeta(root.path());
  const std::string dir = QueueDir(root.path(), "train");
  BatchFileInfo info{.batch_size = 1,
                     .num_batches = 1,
                     .sequence = 1,
                     .split = "train",
                     .schema = Lc0Schema()};
  info.schema[1].shape = {7};
  absl::StatusOr<std::string> header = EncodeBatchFileHeader(info);
  ASSERT_TRUE(header.ok());
  uint64_t data = 0;
  for (const TensorSpec& spec : BatchFileTensors(info)) data += spec.ByteSize();
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFileAtomically(dir, "1000-000001-1.safetensors",
                                  *header + std::string(data, '\0'))
                  .ok());
  auto loader = StartLoader(ReaderStage(root.path()));
  EXPECT_THAT([&] { DrainIds(*loader); },
              ::testing::ThrowsMessage<PipelineError>(HasSubstr("'probs'")));
  EXPECT_THAT(Entries(dir), ElementsAre("1000-000001-1.safetensors"));
}

TEST(BatchFileReaderTest, BadMetaFailsNamingTheKey) {
  TempDir root;
  ASSERT_TRUE(
      WriteFileAtomically(root.path(), "meta.json", R"({"dataset_name": "x"})")
          .ok());
  auto loader = StartLoader(ReaderStage(root.path()));
  EXPECT_THAT(
      [&] { DrainIds(*loader); },
      ::testing::ThrowsMessage<PipelineError>(HasSubstr("'training_type'")));
}

TEST(BatchFileReaderTest, ARestartedConsumerRereadsAnUndeletedFile) {
  TempDir root;
  WriteMeta(root.path());
  const std::string dir = QueueDir(root.path(), "train");
  const std::string name = WriteFile(dir, 1, {1, 2, 3});
  {
    auto loader = StartLoader(ReaderStage(
        root.path(),
        "idle_timeout_ms: 300 } output { name: 'output' capacity: 1"));
    auto first = loader->GetNextFor<TypedBatch>("", std::chrono::seconds(30));
    ASSERT_EQ(first.kind, Kind::kItem);
    EXPECT_EQ(BatchId(*first.item), 1);
    loader->Stop();  // killed mid-file
  }
  EXPECT_THAT(Entries(dir), ElementsAre(name));
  auto loader = StartLoader(ReaderStage(root.path()));
  EXPECT_THAT(DrainIds(*loader), ElementsAre(1, 2, 3));
  EXPECT_TRUE(Entries(dir).empty());
}

TEST(BatchFileReaderTest, LegacyFilesAreReadInNameOrderAndKept) {
  TempDir root;
  WriteMeta(root.path());
  const std::string a = WriteFile(root.path(), 1, {1, 2});
  const std::string b = WriteFile(root.path(), 2, {3});
  std::filesystem::rename(root / a, root / "train_batches_0002.safetensors");
  std::filesystem::rename(root / b, root / "train_batches_0001.safetensors");
  auto loader = StartLoader(ReaderStage(root.path(), ""));
  EXPECT_THAT(DrainIds(*loader), ElementsAre(3, 1, 2));
  EXPECT_THAT(Entries(root.path()),
              ElementsAre("meta.json", "train_batches_0001.safetensors",
                          "train_batches_0002.safetensors"));
}

// A read-only remount makes unlink fail (EROFS) even for root.
TEST(BatchFileReaderTest, AFailedDeleteIsRetriedThenReported) {
  TempDir root;
  if (mount("tmpfs", root.path().c_str(), "tmpfs", 0, "size=4m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs: " << std::strerror(errno);
  }
  const auto remount = [&](unsigned long flags) {
    ASSERT_EQ(mount("tmpfs", root.path().c_str(), "tmpfs", MS_REMOUNT | flags,
                    "size=4m"),
              0)
        << std::strerror(errno);
  };
  WriteMeta(root.path());
  const std::string dir = QueueDir(root.path(), "train");
  WriteFile(dir, 1, {1});
  WriteFile(dir, 2, {2});
  remount(MS_RDONLY);
  {  // Retried until the file system is writable again.
    auto loader = StartLoader(
        absl::StrCat(ReaderStage(root.path(),
                                 "idle_timeout_ms: 300 delete_attempts: 20 "
                                 "delete_backoff_ms: 20"),
                     "metrics_interval_seconds: 0.01\n"));
    auto first = loader->GetNextFor<TypedBatch>("", std::chrono::seconds(30));
    ASSERT_EQ(first.kind, Kind::kItem);
    EXPECT_EQ(BatchId(*first.item), 1);
    ASSERT_TRUE(lc0::testing::WaitUntil([&] {
      return lc0::testing::StageTotals(*loader, "reader")
                 .batch_file_reader()
                 .delete_retries() > 0;
    }));
    remount(0);
    EXPECT_THAT(DrainIds(*loader), ElementsAre(2));
    EXPECT_TRUE(Entries(dir).empty());
  }
  WriteFile(dir, 3, {3});
  remount(MS_RDONLY);
  {  // Reported once the attempts are spent; the file stays.
    auto loader = StartLoader(
        ReaderStage(root.path(), "delete_attempts: 3 delete_backoff_ms: 1"));
    EXPECT_THAT([&] { DrainIds(*loader); },
                ::testing::ThrowsMessage<PipelineError>(
                    HasSubstr("after 3 attempts: Read-only file system")));
  }
  EXPECT_EQ(Entries(dir).size(), 1u);
  EXPECT_EQ(umount(root.path().c_str()), 0) << std::strerror(errno);
}

}  // namespace
}  // namespace sluice::batch_queue
