#include "stages/generic/shuffle_buffer.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/data_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/stages/generic/example_source.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::sluice::testing::FactoryWithExamples;
using ::sluice::testing::IndexedExamples;
using ::sluice::testing::ParseConfig;
using ::sluice::testing::StageTotals;
using ::testing::HasSubstr;

// source (examples 0..count-1) -> shuffle with `shuffle_config`.
std::string Config(const std::string& shuffle_config, uint64_t seed,
                   int threads = 2) {
  return absl::StrCat(
      "worker_threads: ", threads, " seed: ", seed,
      R"pb(
        stage {
          name: "source"
          counting_source {}
        }
        stage { name: "shuffle" input: "source" shuffle_buffer {)pb",
      shuffle_config, "} }");
}

// Runs the pipeline to the end; the examples' indices in output order.
std::vector<int64_t> RunShuffle(const std::string& shuffle_config,
                                uint64_t count, uint64_t seed = 1,
                                int threads = 2) {
  DataLoader loader(FactoryWithExamples("source", IndexedExamples(count)));
  loader.Configure(ParseConfig(Config(shuffle_config, seed, threads)));
  loader.Start();
  std::vector<int64_t> indices;
  while (std::optional<Example> example = loader.GetNext<Example>()) {
    const ExampleField* index = example->Find("index");
    EXPECT_NE(index, nullptr);
    if (index != nullptr) indices.push_back(index->scalar<int64_t>());
  }
  return indices;
}

std::vector<int64_t> Iota(uint64_t count) {
  std::vector<int64_t> values(count);
  for (uint64_t i = 0; i < count; ++i) values[i] = static_cast<int64_t>(i);
  return values;
}

TEST(ShuffleBufferTest, ConfigErrorsNameStageAndField) {
  for (const auto& [config, field] :
       {std::pair<std::string, std::string>{"size: 0", "shuffle_buffer.size"},
        {"size: 10 min_fill: 11", "shuffle_buffer.min_fill"}}) {
    DataLoader loader(FactoryWithExamples("source", IndexedExamples(1)));
    try {
      loader.Configure(ParseConfig(Config(config, 1)));
      ADD_FAILURE() << "accepted " << config;
    } catch (const ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr("'shuffle'"));
      EXPECT_THAT(error.what(), HasSubstr(field));
    }
  }
}

TEST(ShuffleBufferTest, InputMustCarryExamples) {
  DataLoader loader(CreateStage);
  try {
    loader.Configure(ParseConfig(R"pb(
      stage {
        name: "numbers"
        counting_source { count: 1 }
      }
      stage {
        name: "shuffle"
        input: "numbers"
        shuffle_buffer {}
      })pb"));
    ADD_FAILURE() << "accepted a channel of integers";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("'shuffle'"));
    EXPECT_THAT(error.what(), HasSubstr("Example"));
  }
}

TEST(ShuffleBufferTest, FiniteStreamLosesAndDuplicatesNothing) {
  for (const char* config : {"size: 100", "size: 100 min_fill: 10",
                             "size: 100 min_fill: 0", "size: 5000", ""}) {
    const std::vector<int64_t> indices = RunShuffle(config, 3000);
    std::vector<int64_t> sorted = indices;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, Iota(3000)) << config;
    // And it did shuffle, except with min_fill 0: when downstream keeps up,
    // every example passes straight through.
    if (std::string(config).find("min_fill: 0") == std::string::npos) {
      EXPECT_NE(indices, Iota(3000)) << config;
    }
  }
}

TEST(ShuffleBufferTest, NothingEmittedBeforeMinFill) {
  // With min_fill M, the first example out is one of the first M+1 in:
  // nothing leaves before the M+1-th arrives (the output has room, so
  // without the threshold example 0 would pass straight through).
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<int64_t> indices =
        RunShuffle("size: 300 min_fill: 100", 1000, seed);
    ASSERT_FALSE(indices.empty());
    EXPECT_LE(indices.front(), 100);
  }
}

TEST(ShuffleBufferTest, MinFillZeroWithRoomPassesThrough) {
  // The output (capacity 256) has room for 200 examples.
  EXPECT_EQ(RunShuffle("size: 1000 min_fill: 0", 200), Iota(200));
}

TEST(ShuffleBufferTest, OutputDependsOnlyOnSeedAndInput) {
  // min_fill == size (the default): a pure function of input and seed,
  // whatever the number of worker threads.
  const std::vector<int64_t> a = RunShuffle("size: 64", 2000, 5, 1);
  EXPECT_EQ(RunShuffle("size: 64", 2000, 5, 2), a);
  EXPECT_EQ(RunShuffle("size: 64 min_fill: 64", 2000, 5, 2), a);
  EXPECT_NE(RunShuffle("size: 64", 2000, 6, 2), a);
}

TEST(ShuffleBufferTest, MetricsReportCapacityFillAndCounts) {
  DataLoader loader(FactoryWithExamples("source", IndexedExamples(1000)));
  loader.Configure(ParseConfig(Config("size: 500 min_fill: 200", 1)));
  loader.Start();
  uint64_t out = 0;
  while (loader.GetNext<Example>()) ++out;
  EXPECT_EQ(out, 1000u);
  loader.Stop();
  const ShuffleBufferMetricsProto totals =
      StageTotals(loader, "shuffle").shuffle_buffer();
  EXPECT_EQ(totals.capacity(), 500u);
  EXPECT_EQ(totals.examples_received(), 1000u);
  EXPECT_EQ(totals.examples_emitted(), 1000u);
  EXPECT_EQ(totals.fill(), 0u);  // drained
}

}  // namespace
}  // namespace sluice
