// The example pipelines (proto/examples/) end to end on generated data, and
// a pipeline with several unpackers and samplers in parallel.
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine/data_loader.h"
#include "gtest/gtest.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/tensor_expansion.h"
#include "stages/stage_factory.h"
#include "tests/stages/lc0/chunk_test_util.h"
#include "tests/stages/lc0/frame_test_util.h"
#include "tests/testing/sanitizers.h"

namespace sluice::lc0 {
namespace {

using ::sluice::lc0::testing::ExampleConfig;
using ::sluice::lc0::testing::ParseConfig;
using ::sluice::lc0::testing::PositionHash;
using ::sluice::lc0::testing::StageTotals;
using ::sluice::lc0::testing::TempDir;
using ::sluice::testing::UnlessSanitizer;

// How many times each position hash occurs.
using HashCounts = std::map<uint64_t, int>;

// The data set: 3 tars of kGamesPerTar games (seed 5) and 4 loose games
// (seed 6); a smaller one under a sanitizer.
constexpr int kGamesPerTar = UnlessSanitizer(10, 4);
constexpr int kLooseGames = 4;
constexpr uint64_t kGames = 3 * kGamesPerTar + kLooseGames;

// Writes the data set into `dir`; returns the hashes of every position's
// tensors, expanded directly.
HashCounts WriteDataSet(const std::string& dir) {
  HashCounts expected;
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(1);
  absl::StatusOr<TensorExpander> expander = TensorExpander::Create(1);
  EXPECT_TRUE(batch.ok() && expander.ok());
  for (const auto& [seed, mode, games] :
       {std::tuple{uint64_t{5}, OutputMode::kTar, 3 * kGamesPerTar},
        std::tuple{uint64_t{6}, OutputMode::kLoose, kLooseGames}}) {
    const GeneratorOptions options{
        .seed = seed, .version = 6, .input_format = 1};
    absl::StatusOr<GeneratedFiles> files =
        WriteGames(options, {.mode = mode,
                             .dir = dir,
                             .games = games,
                             .games_per_tar = kGamesPerTar});
    EXPECT_TRUE(files.ok()) << files.status();
    for (int game = 0; game < games; ++game) {
      absl::StatusOr<std::string> raw = GenerateGame(options, game);
      EXPECT_TRUE(raw.ok());
      for (size_t off = 0; off < raw->size(); off += kV6RecordSize) {
        V6TrainingRecord record;
        UpconvertToV6(std::string_view(*raw).substr(off, kV6RecordSize),
                      RecordVersion::kV6, &record);
        expander->Expand(record, &*batch, 0);
        ++expected[PositionHash(*batch, 0)];
      }
    }
  }
  return expected;
}

// Pulls every batch of output `alias` and counts its position hashes.
void CountPositions(DataLoader& loader, const std::string& alias,
                    HashCounts* counts, size_t* batches) {
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>(alias)) {
    ++*batches;
    for (size_t slot = 0; slot < batch->size(); ++slot) {
      ++(*counts)[PositionHash(*batch, slot)];
    }
  }
}

TEST(Lc0PipelineTest, EvalYieldsEveryPositionExactlyOnceThenEnds) {
  TempDir dir;
  const HashCounts expected = WriteDataSet(dir.path());
  DataLoader loader(CreateStage);
  DataLoaderConfig config = ExampleConfig("lc0_eval", dir.path());
  config.set_worker_threads(2);
  loader.Configure(config);
  loader.Start();
  HashCounts seen;
  size_t batches = 0;
  CountPositions(loader, "", &seen, &batches);
  EXPECT_EQ(seen, expected);
  loader.Stop();
  const TensorGeneratorMetricsProto tensors =
      StageTotals(loader, "tensors").tensor_generator();
  EXPECT_EQ(tensors.batches(), batches);
  uint64_t positions = 0;
  for (const auto& [hash, count] : expected) positions += count;
  EXPECT_EQ(tensors.positions(), positions);
  EXPECT_EQ(StageTotals(loader, "unpacker").chunk_unpacker().chunks_unpacked(),
            kGames);
}

TEST(Lc0PipelineTest, TrainDeliversFullBatchesUntilStopped) {
  // More positions than the data set holds (at most 250 a game): the pool
  // starts new passes, the stream goes on.
  constexpr int kBatches = UnlessSanitizer(20, 5);
  static_assert(kBatches * 1024 > kGames * 250);
  constexpr uint64_t kReservoir = UnlessSanitizer(4000, 1600);
  TempDir dir;
  WriteDataSet(dir.path());
  DataLoader loader(CreateStage);
  DataLoaderConfig config = ExampleConfig("lc0_train", dir.path());
  config.set_worker_threads(2);
  for (StageConfig& stage : *config.mutable_stage()) {
    if (!stage.has_shuffling_frame_sampler()) continue;
    stage.mutable_shuffling_frame_sampler()->set_reservoir_size(kReservoir);
    stage.mutable_shuffling_frame_sampler()->set_min_fill(kReservoir / 2);
  }
  loader.Configure(config);
  loader.Start();
  for (int i = 0; i < kBatches; ++i) {
    std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
    ASSERT_TRUE(batch.has_value());
    EXPECT_EQ(batch->size(), 1024u);
  }
  loader.Stop();
  EXPECT_FALSE(loader.GetNext<TypedBatch>().has_value());
  const StageMetricProto sampler = StageTotals(loader, "sampler");
  EXPECT_EQ(sampler.shuffling_frame_sampler().capacity(), kReservoir);
  EXPECT_GE(sampler.shuffling_frame_sampler().frames_received(),
            uint64_t{kBatches} * 1024);
}

// Two unpackers share the pool's output; each feeds its own sampler and
// tensor generator; two threads pull the two outputs. Every position still
// arrives exactly once. Run under TSan in CI (label concurrency).
TEST(Lc0PipelineTest, SeveralUnpackersAndSamplersInParallel) {
  TempDir dir;
  const HashCounts expected = WriteDataSet(dir.path());
  DataLoaderConfig config = ParseConfig(R"pb(
    worker_threads: 2
    metrics_interval_seconds: 0.05
    stage {
      name: "files"
      file_path_provider { mode: ONCE }
    }
    stage {
      name: "sources"
      input: "files"
      chunk_source_loader {}
    }
    stage {
      name: "pool"
      input: "sources"
      shuffling_chunk_pool { single_pass: true }
    }
  )pb");
  config.mutable_stage(0)->mutable_file_path_provider()->add_directory(
      dir.path());
  for (const std::string branch : {"a", "b"}) {
    StageConfig* unpacker = config.add_stage();
    unpacker->set_name("unpacker_" + branch);
    unpacker->add_input("pool");
    unpacker->mutable_chunk_unpacker()->set_parallelism(3);
    StageConfig* sampler = config.add_stage();
    sampler->set_name("sampler_" + branch);
    sampler->add_input("unpacker_" + branch);
    sampler->mutable_shuffling_frame_sampler()->set_reservoir_size(500);
    sampler->mutable_shuffling_frame_sampler()->set_min_fill(100);
    StageConfig* tensors = config.add_stage();
    tensors->set_name("tensors_" + branch);
    tensors->add_input("sampler_" + branch);
    tensors->mutable_tensor_generator()->set_batch_size(100);
    tensors->mutable_tensor_generator()->set_parallelism(2);
    config.add_output(branch + ":tensors_" + branch);
  }
  DataLoader loader(CreateStage);
  loader.Configure(config);
  loader.Start();
  HashCounts seen_a, seen_b;
  size_t batches_a = 0, batches_b = 0;
  std::thread puller([&] { CountPositions(loader, "b", &seen_b, &batches_b); });
  CountPositions(loader, "a", &seen_a, &batches_a);
  puller.join();
  HashCounts seen = seen_a;
  for (const auto& [hash, count] : seen_b) seen[hash] += count;
  EXPECT_EQ(seen, expected);
  loader.Stop();
  EXPECT_EQ(
      StageTotals(loader, "unpacker_a").chunk_unpacker().chunks_unpacked() +
          StageTotals(loader, "unpacker_b").chunk_unpacker().chunks_unpacked(),
      kGames);
}

}  // namespace
}  // namespace sluice::lc0
