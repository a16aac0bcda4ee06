#include "stages/batch_queue/batch_file_writer.h"

#include <sys/mount.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
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
using lc0::testing::TempDir;
using lc0::testing::WaitUntil;

// A reader of queue `from` (ending 300 ms after its last file) feeding a
// writer into `to`; `extra` goes inside batch_file_writer.
std::string CopyPipeline(const std::string& from, const std::string& to,
                         const std::string& extra) {
  return absl::StrCat(
      ReaderStage(from),
      "stage { name: 'writer' input: 'reader' batch_file_writer { root: '", to,
      "' split: 'train' dataset_name: 'test' batch_size: 2 "
      "poll_interval_ms: 5 ",
      extra, " } }\nmetrics_interval_seconds: 0.05\n");
}

// The batch ids of each final file of `dir`, in queue order.
std::vector<std::vector<int>> FileIds(const std::string& dir) {
  std::vector<std::vector<int>> out;
  absl::StatusOr<std::vector<QueueFile>> files = ListQueueFiles(dir);
  EXPECT_TRUE(files.ok());
  for (const QueueFile& file : *files) {
    absl::StatusOr<BatchFile> opened =
        BatchFile::Open(absl::StrCat(dir, "/", file.name), Lc0Schema());
    EXPECT_TRUE(opened.ok()) << opened.status();
    out.emplace_back();
    for (int64_t b = 0; b < opened->info().num_batches; ++b) {
      out.back().push_back(BatchId(*opened->ReadBatch(b)));
    }
  }
  return out;
}

size_t FileCount(const std::string& dir) {
  absl::StatusOr<std::vector<QueueFile>> files = ListQueueFiles(dir);
  return files.ok() ? files->size() : 0;
}

// A queue at `root` holding batches `first`..`last`, one per file.
void FillQueue(const std::string& root, int first, int last) {
  WriteMeta(root);
  for (int id = first; id <= last; ++id) {
    WriteFile(QueueDir(root, "train"), id, {id});
  }
}

TEST(BatchFileWriterTest, ConfigErrors) {
  const std::string reader = ReaderStage("/nowhere");
  for (const char* fields : {
           "split: 't' dataset_name: 'd' batch_size: 1",
           "root: '/x' dataset_name: 'd' batch_size: 1",
           "root: '/x' split: 'a/b' dataset_name: 'd' batch_size: 1",
           "root: '/x' split: 't' batch_size: 1",
           "root: '/x' split: 't' dataset_name: 'd'",
           "root: '/x' split: 't' dataset_name: 'd' batch_size: 1 "
           "batches_per_file: 0",
           "root: '/x' split: 't' dataset_name: 'd' batch_size: 1 "
           "max_backlog_files: 0",
           "root: '/x' split: 't' dataset_name: 'd' batch_size: 1 "
           "training_type: 'CHESS'",
       }) {
    DataLoader loader(CreateStage);
    EXPECT_THROW(loader.Configure(lc0::testing::ParseConfig(
                     absl::StrCat(reader,
                                  "stage { name: 'w' input: 'reader' "
                                  "batch_file_writer { ",
                                  fields, " } }"))),
                 ConfigError)
        << fields;
  }
}

TEST(BatchFileWriterTest, GroupsBatchesPerFileAndWritesMeta) {
  TempDir a, b;
  FillQueue(a.path(), 1, 5);
  uint64_t bytes = 0;
  const std::vector<TypedBatch> partial = [] {
    std::vector<TypedBatch> v;
    v.push_back(MakeBatch(6, 1));
    return v;
  }();
  ASSERT_TRUE(WriteBatchFile(QueueDir(a.path(), "train"), "train", 6, 1000,
                             partial, &bytes)
                  .ok());
  auto loader = StartLoader(CopyPipeline(
      a.path(), b.path(), "batches_per_file: 2 max_backlog_files: 10"));
  const std::string out = QueueDir(b.path(), "train");
  ASSERT_TRUE(WaitUntil([&] { return FileCount(out) == 4; }));
  EXPECT_THAT(FileIds(out), ElementsAre(ElementsAre(1, 2), ElementsAre(3, 4),
                                        ElementsAre(5), ElementsAre(6)));
  absl::StatusOr<DatasetMeta> meta = ReadDatasetMeta(b.path());
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->batch_size, 2);
  EXPECT_EQ(meta->batch_schema, Lc0Schema());
}

TEST(BatchFileWriterTest, StopsAtTheWatermarkAndResumesWhenFilesGo) {
  TempDir a, b;
  FillQueue(a.path(), 1, 6);
  auto loader = StartLoader(CopyPipeline(
      a.path(), b.path(), "batches_per_file: 1 max_backlog_files: 2"));
  const std::string out = QueueDir(b.path(), "train");
  ASSERT_TRUE(WaitUntil([&] { return FileCount(out) == 2; }));
  // Give the writer time to (wrongly) pass the watermark.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(FileCount(out), 2u);
  std::vector<int> consumed;
  while (consumed.size() < 6) {
    ASSERT_TRUE(WaitUntil([&] { return FileCount(out) > 0; }));
    const QueueFile oldest = ListQueueFiles(out)->front();
    consumed.push_back(FileIds(out).front().front());
    std::filesystem::remove(out + "/" + oldest.name);
  }
  EXPECT_THAT(consumed, ElementsAre(1, 2, 3, 4, 5, 6));
  loader->Stop();
  const StageMetricProto totals = lc0::testing::StageTotals(*loader, "writer");
  EXPECT_EQ(totals.batch_file_writer().files_written(), 6u);
  EXPECT_GT(totals.batch_file_writer().backpressure_wait_seconds(), 0.1);
}

TEST(BatchFileWriterTest, InotifyWakesTheWriterWhenTheConsumerDeletes) {
  TempDir a, b;
  FillQueue(a.path(), 1, 3);
  // A 10-minute poll: only an inotify event can wake the writer in time.
  auto loader = StartLoader(absl::StrCat(
      ReaderStage(a.path()),
      "stage { name: 'writer' input: 'reader' batch_file_writer { root: '",
      b.path(),
      "' split: 'train' dataset_name: 'test' batch_size: 2 "
      "poll_interval_ms: 600000 batches_per_file: 1 max_backlog_files: 1 } }"));
  const std::string out = QueueDir(b.path(), "train");
  std::vector<int> consumed;
  while (consumed.size() < 3) {
    ASSERT_TRUE(WaitUntil([&] { return FileCount(out) > 0; },
                          std::chrono::seconds(30)));
    EXPECT_EQ(FileCount(out), 1u);
    const QueueFile oldest = ListQueueFiles(out)->front();
    consumed.push_back(FileIds(out).front().front());
    std::filesystem::remove(out + "/" + oldest.name);
  }
  EXPECT_THAT(consumed, ElementsAre(1, 2, 3));
}

TEST(BatchFileWriterTest, ANewWriterResumesTheSequenceAfterAKill) {
  TempDir a, b;
  FillQueue(a.path(), 1, 1);
  WriteMeta(b.path());
  const std::string out = QueueDir(b.path(), "train");
  WriteFile(out, 7, {100});
  // A writer killed mid-write leaves only its hidden temporary.
  std::ofstream(out + "/.5000-000008-2.safetensors.tmp") << "partial";
  auto loader = StartLoader(CopyPipeline(a.path(), b.path(), ""));
  ASSERT_TRUE(WaitUntil([&] { return FileCount(out) == 2; }));
  const std::vector<QueueFile> files = *ListQueueFiles(out);
  EXPECT_EQ(files[1].sequence, 8);
  EXPECT_THAT(FileIds(out), ElementsAre(ElementsAre(100), ElementsAre(1)));
  EXPECT_EQ(Entries(out).size(), 2u);  // the temporary is gone
}

TEST(BatchFileWriterTest, AMismatchedMetaFailsNamingTheKey) {
  TempDir a, b;
  FillQueue(a.path(), 1, 1);
  WriteMeta(b.path(), /*batch_size=*/3);
  auto loader = StartLoader(CopyPipeline(a.path(), b.path(), ""));
  ASSERT_TRUE(WaitUntil([&] { return !loader->pipeline().status().ok(); }));
  EXPECT_THAT(std::string(loader->pipeline().status().message()),
              HasSubstr("'batch_size'"));
}

TEST(BatchFileWriterTest, ADiskFullIsReportedWithoutTemporaries) {
  TempDir a, b;
  FillQueue(a.path(), 1, 8);
  if (mount("tmpfs", b.path().c_str(), "tmpfs", 0, "size=256k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs: " << std::strerror(errno);
  }
  {
    auto loader =
        StartLoader(CopyPipeline(a.path(), b.path(), "batches_per_file: 4"));
    ASSERT_TRUE(WaitUntil([&] { return !loader->pipeline().status().ok(); }));
    EXPECT_THAT(std::string(loader->pipeline().status().message()),
                HasSubstr("No space left"));
    loader->Stop();
    EXPECT_TRUE(Entries(QueueDir(b.path(), "train")).empty());
  }
  EXPECT_EQ(umount(b.path().c_str()), 0) << std::strerror(errno);
}

}  // namespace
}  // namespace sluice::batch_queue
