// Shutdown and back-pressure of whole pipelines: a stage that throws fails
// every consumer with PipelineError; Stop() racing GetNext from several
// threads always returns; a consumer that stops pulling for seconds leaves
// every queue within its capacity and memory within the configured bound.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/data_loader.h"
#include "gtest/gtest.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/training_record.h"
#include "stages/stage_factory.h"
#include "tests/reliability/data_set.h"
#include "tests/stages/lc0/chunk_test_util.h"
#include "tests/stages/lc0/frame_test_util.h"

namespace sluice::lc0 {
namespace {

using ::sluice::lc0::testing::kGamesPerTar;
using ::sluice::lc0::testing::ParseConfig;
using ::sluice::lc0::testing::ResidentBytes;
using ::sluice::lc0::testing::SmallTrainConfig;
using ::sluice::lc0::testing::TempDir;
using ::sluice::lc0::testing::WaitUntil;
using ::sluice::lc0::testing::WriteDataSet;

TEST(ShutdownTest, AThrowingStageFailsEveryConsumerWithPipelineError) {
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(R"pb(
    worker_threads: 2
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "faulty"
      input: "source"
      pass_through { parallelism: 2 fail_after_items: 1000 }
    }
  )pb"));
  loader.Start();
  std::atomic<int> failed{0};
  std::vector<std::thread> consumers;
  for (int i = 0; i < 3; ++i) {
    consumers.emplace_back([&] {
      try {
        while (loader.GetNext<uint64_t>().has_value()) {
        }
      } catch (const PipelineError&) {
        failed.fetch_add(1);
      }
    });
  }
  for (std::thread& consumer : consumers) consumer.join();
  EXPECT_EQ(failed.load(), 3);
  EXPECT_THROW(loader.GetNext<uint64_t>(), PipelineError);
  loader.Stop();
}

TEST(ShutdownTest, StopRacingGetNextFromSeveralThreadsAlwaysReturns) {
  TempDir dir;
  WriteDataSet(5, {.mode = OutputMode::kTar,
                   .dir = dir.path(),
                   .games = 2 * kGamesPerTar,
                   .games_per_tar = kGamesPerTar});
  const DataLoaderConfig config = SmallTrainConfig(dir.path(), 64);
  for (int round = 0; round < 20; ++round) {
    DataLoader loader(CreateStage);
    loader.Configure(config);
    loader.Start();
    std::atomic<int> batches{0};
    std::atomic<int> returned{0};
    std::mutex errors_mu;
    std::vector<std::string> errors;  // a Stop is not a pipeline failure
    std::vector<std::thread> consumers;
    for (int i = 0; i < 4; ++i) {
      consumers.emplace_back([&] {
        try {
          while (loader.GetNext<TypedBatch>().has_value()) {
            batches.fetch_add(1);
          }
        } catch (const std::exception& error) {
          std::lock_guard lock(errors_mu);
          errors.push_back(error.what());
        }
        returned.fetch_add(1);
      });
    }
    // Stop at a different point each round: before any batch, or after a
    // few.
    const int stop_after = round % 4;
    EXPECT_TRUE(WaitUntil([&] { return batches.load() >= stop_after; }))
        << "round " << round << ": fewer than " << stop_after << " batches";
    loader.Stop();
    EXPECT_TRUE(WaitUntil([&] { return returned.load() == 4; }))
        << "round " << round << ": a consumer is stuck in GetNext";
    for (std::thread& consumer : consumers) consumer.join();
    EXPECT_TRUE(errors.empty()) << "round " << round << ": " << errors.front();
  }
}

// Upper bound on the resident memory a training pipeline adds, from its
// configured capacities: the reservoir and the frames in flight, the tensor
// batches queued and being filled, the chunks queued; plus a fixed slack
// for thread stacks, allocator caches and the index of the window.
uint64_t TrainMemoryBound(const DataLoaderConfig& config) {
  constexpr uint64_t kFrameBytes = sizeof(V6TrainingRecord) + 64;
  constexpr uint64_t kPositionTensorBytes = (112 * 64 + 1858 + 3 + 3 + 1) * 4;
  constexpr uint64_t kChunkBytes = 250 * kV6RecordSize;  // largest game
  constexpr uint64_t kSlack = uint64_t{96} << 20;
  uint64_t frames = 0, batches_bytes = 0, chunks = 0;
  for (const StageConfig& stage : config.stage()) {
    const uint64_t capacity =
        stage.output_size() > 0 ? stage.output(0).capacity() : 16;
    if (stage.has_shuffling_chunk_pool()) chunks += capacity;
    if (stage.has_chunk_unpacker()) {
      chunks += stage.chunk_unpacker().parallelism();
      frames += capacity + stage.chunk_unpacker().parallelism() * 250;
    }
    if (stage.has_shuffling_frame_sampler()) {
      frames += stage.shuffling_frame_sampler().reservoir_size() + capacity;
    }
    if (stage.has_tensor_generator()) {
      // In flight, plus the recycled buffers the generator keeps free.
      const uint64_t in_flight =
          capacity + stage.tensor_generator().parallelism() + 1;
      batches_bytes += (2 * in_flight + 1) *
                       stage.tensor_generator().batch_size() *
                       kPositionTensorBytes;
    }
  }
  return frames * kFrameBytes + batches_bytes + chunks * kChunkBytes + kSlack;
}

// A consumer that stops pulling for 10 s: every stage fills its buffers and
// blocks; queues stay within their capacities and memory within the bound.
TEST(ShutdownTest, AStalledConsumerLeavesQueuesAndMemoryBounded) {
  TempDir dir;
  WriteDataSet(5, {.mode = OutputMode::kTar,
                   .dir = dir.path(),
                   .games = 6 * kGamesPerTar,
                   .games_per_tar = kGamesPerTar});
  const DataLoaderConfig config = SmallTrainConfig(dir.path(), 256);
  const uint64_t bound = TrainMemoryBound(config);
  const uint64_t before = ResidentBytes();
  DataLoader loader(CreateStage);
  loader.Configure(config);
  loader.Start();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(loader.GetNext<TypedBatch>());
  const auto stall_end =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  uint64_t peak = 0, snapshots = 0;
  while (std::chrono::steady_clock::now() < stall_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    peak = std::max(peak, ResidentBytes());
    const DataLoaderMetricsProto metrics = loader.GetMetrics();
    for (const StageMetricProto& stage : metrics.stage_metrics()) {
      for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
        ++snapshots;
        EXPECT_LE(queue.size(), queue.capacity())
            << stage.name() << "." << queue.name();
      }
    }
  }
  EXPECT_GT(snapshots, 0u);
  EXPECT_LE(peak - std::min(peak, before), bound)
      << "peak " << peak << " before " << before;
  // Pulling again resumes the stream.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(loader.GetNext<TypedBatch>());
  loader.Stop();
}

}  // namespace
}  // namespace sluice::lc0
