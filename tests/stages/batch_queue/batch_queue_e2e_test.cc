// End to end across two processes: a forked producer runs a BatchFileWriter
// pipeline (under backpressure) into a queue that this process consumes
// with a BatchFileReader. Its own binary: the fork happens while the process
// is still single-threaded.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tests/stages/batch_queue/batch_queue_test_util.h"

namespace sluice::batch_queue {
namespace {

using namespace ::sluice::batch_queue::testing;  // NOLINT
using Kind = Channel<TypedBatch>::GetResult::Kind;

constexpr int kBatches = 40;

// The producer: copies queue `from` (kBatches batches) into queue `to`, 3
// batches per file, at most 2 files waiting. Returns the exit code.
int Produce(const std::string& from, const std::string& to) {
  auto loader = StartLoader(absl::StrCat(
      ReaderStage(from),
      "stage { name: 'writer' input: 'reader' batch_file_writer { root: '", to,
      "' split: 'train' dataset_name: 'test' batch_size: 2 "
      "batches_per_file: 3 max_backlog_files: 2 poll_interval_ms: 2 } }\n"
      "metrics_interval_seconds: 0.02\n"));
  const bool done = lc0::testing::WaitUntil([&] {
    return lc0::testing::StageTotals(*loader, "writer")
               .batch_file_writer()
               .batches_written() == kBatches;
  });
  loader->Stop();
  return done && loader->pipeline().status().ok() ? 0 : 1;
}

TEST(BatchQueueEndToEndTest, TwoProcessesExchangeEveryBatchExactlyOnce) {
  lc0::testing::TempDir source, queue;
  WriteMeta(source.path());
  for (int id = 0; id < kBatches; id += 2) {
    WriteFile(QueueDir(source.path(), "train"), id + 1, {id, id + 1});
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(Produce(source.path(), queue.path()));

  auto loader = StartLoader(ReaderStage(queue.path(), ""));
  std::multiset<int> ids;
  for (int i = 0; i < kBatches; ++i) {
    auto result = loader->GetNextFor<TypedBatch>("", std::chrono::seconds(60));
    ASSERT_EQ(result.kind, Kind::kItem) << "after " << i << " batches";
    ids.insert(BatchId(*result.item));
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto extra =
      loader->GetNextFor<TypedBatch>("", std::chrono::milliseconds(200));
  EXPECT_EQ(extra.kind, Kind::kTimeout);
  loader->Stop();
  ASSERT_EQ(ids.size(), static_cast<size_t>(kBatches));
  for (int id = 0; id < kBatches; ++id) EXPECT_EQ(ids.count(id), 1u) << id;
  EXPECT_TRUE(ListQueueFiles(QueueDir(queue.path(), "train"))->empty());
}

}  // namespace
}  // namespace sluice::batch_queue
