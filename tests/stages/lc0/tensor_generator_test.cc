#include "stages/lc0/tensor_generator.h"

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "engine/metrics_accumulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/stages/lc0/chunk_test_util.h"
#include "tests/stages/lc0/frame_test_util.h"
#include "tests/testing/npz_reader.h"

namespace sluice::lc0 {
namespace {

using ::sluice::lc0::testing::FactoryWithSource;
using ::sluice::lc0::testing::LabelledFrames;
using ::sluice::lc0::testing::ParseConfig;
using ::sluice::lc0::testing::StageTotals;
using ::sluice::lc0::testing::Unpacked;
using ::testing::HasSubstr;

// Every golden fixture (tests/data/golden/README.md).
const char* const kFixtures[] = {
    "v6_fmt1_a", "v6_fmt1_b", "v6_fmt2",        "v6_fmt3", "v6_fmt4", "v6_fmt5",
    "v6_fmt132", "v6_fmt133", "v6_fmt1_plies0", "v5_fmt1", "v4",      "v3"};

// The generator's tensors, in order.
constexpr const char* kTensorNames[] = {"planes", "probs", "winner", "best_q",
                                        "plies_left"};

// Appends the bytes of tensor `t` of every batch, in order.
std::string Concatenate(const std::vector<TypedBatch>& batches, size_t t) {
  std::string bytes;
  for (const TypedBatch& batch : batches) {
    const BatchTensor& tensor = batch.tensor(t);
    bytes.append(static_cast<const char*>(tensor.data), tensor.bytes);
  }
  return bytes;
}

// The golden chunk through unpacker and tensor generator (batches of 5, so
// 16 records make 3 full batches and a partial one) equals the reference
// reader's arrays bit for bit.
TEST(TensorGeneratorTest, GoldenFixturesBitExactThroughTheStages) {
  for (const char* fixture : kFixtures) {
    SCOPED_TRACE(fixture);
    const std::string base = std::string("tests/data/golden/") + fixture;
    absl::StatusOr<sluice::testing::NpzFile> npz =
        sluice::testing::ReadNpz(base + ".npz");
    absl::StatusOr<std::string> gz =
        sluice::testing::ReadFileToString(base + ".gz");
    ASSERT_TRUE(npz.ok()) << npz.status();
    ASSERT_TRUE(gz.ok()) << gz.status();
    int32_t input_format = 0;
    std::memcpy(&input_format, npz->at("input_format").data.data(), 4);

    std::vector<Chunk> chunks(1);
    chunks[0].source_name = fixture;
    chunks[0].data = *gz;
    DataLoader loader(FactoryWithSource("source", std::move(chunks)));
    loader.Configure(ParseConfig(absl::StrCat(
        R"pb(
          worker_threads: 2
          stage {
            name: "source"
            counting_source {}
          }
          stage { name: "unpacker" input: "source"
                  chunk_unpacker { input_format:)pb",
        input_format, R"pb(}
                           }
          stage {
            name: "tensors"
            input: "unpacker"
            tensor_generator { batch_size: 5 input_format: )pb",
        input_format, "} }")));
    loader.Start();
    std::vector<TypedBatch> batches;
    while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
      batches.push_back(std::move(*batch));
    }
    ASSERT_EQ(batches.size(), 4u);
    EXPECT_EQ(batches.back().size(), 1u);  // the partial batch, true size
    EXPECT_EQ(batches.back().tensor(0).shape,
              (std::vector<int64_t>{1, 112, 8, 8}));
    for (const TypedBatch& batch : batches) {
      ASSERT_EQ(batch.tensors().size(), 5u);
      for (size_t t = 0; t < batch.tensors().size(); ++t) {
        EXPECT_EQ(batch.tensor(t).name, kTensorNames[t]);
        EXPECT_EQ(batch.tensor(t).dtype, DType::kFloat32);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(batch.tensor(t).data) %
                      kTensorAlignment,
                  0u);
      }
    }
    for (size_t t = 0; t < 5; ++t) {
      const std::string name = kTensorNames[t];
      const sluice::testing::NpyArray& expected = npz->at(name);
      EXPECT_EQ(expected.shape[0], 16) << name;
      EXPECT_TRUE(Concatenate(batches, t) == expected.data)
          << name << " differs from the reference";
    }
  }
}

TEST(TensorGeneratorTest, ConfigErrorsNameStageAndField) {
  for (const auto& [config, field] :
       {std::pair<std::string, std::string>{"batch_size: 0",
                                            "tensor_generator.batch_size"},
        {"input_format: 7", "tensor_generator.input_format"},
        {"parallelism: 0", "tensor_generator.parallelism"}}) {
    DataLoader loader(FactoryWithSource("source", LabelledFrames(1)));
    try {
      loader.Configure(ParseConfig(absl::StrCat(
          R"pb(stage {
                 name: "source"
                 counting_source {}
               }
               stage { name: "tensors" input: "source" tensor_generator {)pb",
          config, "} }")));
      ADD_FAILURE() << "accepted " << config;
    } catch (const ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr("'tensors'"));
      EXPECT_THAT(error.what(), HasSubstr(field));
    }
  }
}

// Frames of the crafted game ids (known distinct-games and max-positions
// figures), V6 records of input format 1 whose tensors carry their index i:
// plies_left i + 1 and probs[0] i.
std::vector<Frame> FramesOfGames(const std::vector<uint64_t>& games) {
  std::vector<Frame> frames = LabelledFrames(games.size());
  for (size_t i = 0; i < games.size(); ++i) {
    V6TrainingRecord record = Unpacked(frames[i]);
    record.version = 6;
    record.input_format = 1;
    record.plies_left = static_cast<float>(i + 1);
    record.probabilities[0] = static_cast<float>(i);
    frames[i] = Frame{PackedRecord::Pack(record), games[i]};
  }
  return frames;
}

TEST(TensorGeneratorTest, ShuffleQualityMetricOnCraftedStream) {
  // Batches of 4: {1,1,1,2} -> 2 games, max 3; {3,4,5,6} -> 4, max 1;
  // {7,7} (partial) -> 1, max 2.
  DataLoader loader(FactoryWithSource(
      "source", FramesOfGames({1, 1, 1, 2, 3, 4, 5, 6, 7, 7})));
  loader.Configure(ParseConfig(R"pb(
    metrics_interval_seconds: 1000
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "tensors"
      input: "source"
      tensor_generator { batch_size: 4 }
    }
  )pb"));
  loader.Start();
  std::vector<size_t> sizes;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    sizes.push_back(batch->size());
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{4, 4, 2}));
  loader.Stop();  // one final snapshot: the whole run is one interval
  const TensorGeneratorMetricsProto metrics =
      StageTotals(loader, "tensors").tensor_generator();
  EXPECT_EQ(metrics.batches(), 3u);
  EXPECT_EQ(metrics.positions(), 10u);
  EXPECT_DOUBLE_EQ(metrics.distinct_games_mean(), (2 + 4 + 1) / 3.0);
  EXPECT_EQ(metrics.distinct_games_min(), 1u);
  EXPECT_DOUBLE_EQ(metrics.max_positions_per_game_mean(), (3 + 1 + 2) / 3.0);
  EXPECT_EQ(metrics.max_positions_per_game_max(), 3u);
  // The three batches were dropped; their buffers are kept for reuse.
  const uint64_t buffer_bytes = TensorBatch::AllocationBytes(4);
  EXPECT_GE(metrics.batch_buffer_bytes(), buffer_bytes);
  EXPECT_LE(metrics.batch_buffer_bytes(), 3 * buffer_bytes);
  EXPECT_EQ(metrics.batch_buffer_bytes() % buffer_bytes, 0u);
}

TEST(TensorGeneratorTest, DropsFramesOfAnotherInputFormat) {
  std::vector<Frame> frames = FramesOfGames({1, 2, 3});
  V6TrainingRecord record = Unpacked(frames[1]);
  record.input_format = 3;
  frames[1].record = PackedRecord::Pack(record);
  DataLoader loader(FactoryWithSource("source", std::move(frames)));
  loader.Configure(ParseConfig(R"pb(
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "tensors"
      input: "source"
      tensor_generator { batch_size: 8 }
    }
  )pb"));
  loader.Start();
  std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->size(), 2u);
  EXPECT_EQ(batch->example_ids(), (std::vector<uint64_t>{1, 3}));
  EXPECT_FALSE(loader.GetNext<TypedBatch>().has_value());
  loader.Stop();
  EXPECT_EQ(SkippedByReason(StageTotals(loader, "tensors"))
                .at("unexpected_input_format"),
            1u);
}

// Three coroutines on two threads fill each batch together: every frame
// lands once, in a slot that holds its own tensors, and only the last batch
// is partial.
TEST(TensorGeneratorTest, ParallelCoroutinesShareBatchesAndLoseNothing) {
  constexpr uint64_t kFrames = 1000;  // 15 batches of 64 and 40 more
  std::vector<uint64_t> games(kFrames);
  std::iota(games.begin(), games.end(), 0);  // game id i for frame i
  DataLoader loader(FactoryWithSource("source", FramesOfGames(games)));
  loader.Configure(ParseConfig(R"pb(
    worker_threads: 2
    stage {
      name: "source"
      counting_source {}
    }
    stage {
      name: "tensors"
      input: "source"
      tensor_generator { batch_size: 64 parallelism: 3 }
    }
  )pb"));
  loader.Start();
  std::vector<size_t> sizes;
  std::vector<int> seen(kFrames);
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    sizes.push_back(batch->size());
    ASSERT_EQ(batch->example_ids().size(), batch->size());
    const float* probs = batch->Find("probs")->As<float>();
    const float* plies_left = batch->Find("plies_left")->As<float>();
    for (size_t slot = 0; slot < batch->size(); ++slot) {
      const uint64_t id = batch->example_ids()[slot];
      ASSERT_LT(id, kFrames);
      ++seen[id];
      EXPECT_EQ(plies_left[slot], static_cast<float>(id + 1));
      EXPECT_EQ(probs[slot * kPolicySize], static_cast<float>(id));
    }
  }
  std::vector<size_t> expected_sizes(15, 64);
  expected_sizes.push_back(40);
  EXPECT_EQ(sizes, expected_sizes);
  EXPECT_THAT(seen, ::testing::Each(1));
}

TEST(TensorGeneratorTest, MeasureBatchQuality) {
  const std::vector<uint64_t> ids = {9, 1, 9, 2, 9, 1};
  const BatchQuality quality = MeasureBatchQuality(ids);
  EXPECT_EQ(quality.distinct_games, 3u);
  EXPECT_EQ(quality.max_positions_per_game, 3u);
  EXPECT_EQ(MeasureBatchQuality({}).distinct_games, 0u);
}

}  // namespace
}  // namespace sluice::lc0
