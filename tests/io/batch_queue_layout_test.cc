#include "io/batch_queue_layout.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "io/atomic_file.h"

namespace sluice {
namespace {

// A fresh, empty directory `name` under the test temp dir.
std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(MakeDirs(dir).ok());
  return dir;
}

TEST(BatchQueueLayoutTest, Names) {
  EXPECT_EQ(QueueFileName(1700000000123, 42, 100),
            "1700000000123-000042-100.safetensors");
  std::optional<QueueFile> file =
      ParseQueueFileName("1700000000123-1234567-3.safetensors");
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->timestamp_ms, 1700000000123);
  EXPECT_EQ(file->sequence, 1234567);
  EXPECT_EQ(file->num_batches, 3);
  for (const char* bad :
       {".1-000001-1.safetensors.tmp", "1-000001-1.safetensors.tmp",
        "1-000001.safetensors", "1-a-1.safetensors", "1--1.safetensors",
        "1-1-1-1.safetensors", "train_batches_1.safetensors"}) {
    EXPECT_FALSE(ParseQueueFileName(bad).has_value()) << bad;
  }
}

TEST(BatchQueueLayoutTest, ListsInOrderIgnoringTemporaries) {
  const std::string dir = FreshDir("layout_order");
  for (const char* name :
       {"20-000003-1.safetensors", "10-000002-1.safetensors",
        "20-000001-1.safetensors", ".30-000009-1.safetensors.tmp", "notes"}) {
    ASSERT_TRUE(WriteFileAtomically(dir, name, "x").ok());
  }
  absl::StatusOr<std::vector<QueueFile>> files = ListQueueFiles(dir);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].name, "10-000002-1.safetensors");
  EXPECT_EQ((*files)[1].name, "20-000001-1.safetensors");
  EXPECT_EQ((*files)[2].name, "20-000003-1.safetensors");
  EXPECT_EQ(*NextQueueSequence(dir), 4);
  EXPECT_EQ(*NextQueueSequence(dir + "/missing"), 1);
  EXPECT_TRUE(ListQueueFiles(dir + "/missing")->empty());
}

TEST(BatchQueueLayoutTest, LegacyFiles) {
  const std::string root = FreshDir("layout_legacy");
  for (const char* name :
       {"train_batches_0002.safetensors", "train_batches_0001.safetensors",
        "val_batches_0001.safetensors", "train_batches_0003.pt"}) {
    ASSERT_TRUE(WriteFileAtomically(root, name, "x").ok());
  }
  absl::StatusOr<std::vector<QueueFile>> files = ListLegacyFiles(root, "train");
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].name, "train_batches_0001.safetensors");
}

TEST(AtomicFileWriterTest, UncommittedWriterLeavesNothing) {
  const std::string dir = FreshDir("atomic");
  {
    absl::StatusOr<AtomicFileWriter> file = AtomicFileWriter::Create(dir, "a");
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(file->Append("partial").ok());
    EXPECT_TRUE(std::ifstream(dir + "/.a.tmp").good());
    EXPECT_FALSE(std::ifstream(dir + "/a").good());
  }
  EXPECT_FALSE(std::ifstream(dir + "/.a.tmp").good());
  ASSERT_TRUE(WriteFileAtomically(dir, "a", "whole").ok());
  EXPECT_EQ(*ReadWholeFile(dir + "/a"), "whole");
}

}  // namespace
}  // namespace sluice
