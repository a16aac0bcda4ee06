#include "stages/lc0/chunk_source_splitter.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/stages/lc0/chunk_test_util.h"

namespace sluice::lc0 {
namespace {

using testing::ChunkTar;
using ::testing::HasSubstr;
using testing::NextChunk;
using testing::ParseConfig;
using testing::TempDir;
using testing::WriteFile;

TEST(AssignSplitTest, StableAndPinned) {
  const std::vector<double> weights = {0.9, 0.1};
  // Pinned: the assignment is a pure function of its arguments, the same on
  // every machine (FNV-1a + splitmix64, IEEE doubles).
  std::string pattern;
  for (uint64_t i = 0; i < 16; ++i) {
    pattern += std::to_string(AssignSplit("a.tar", i, 0, weights));
  }
  EXPECT_EQ(pattern, "0000010000000001");  // computed independently
  EXPECT_EQ(AssignSplit("a.tar", 3, 0, weights),
            AssignSplit("a.tar", 3, 0, weights));
}

TEST(AssignSplitTest, WeightsHonouredWithinTolerance) {
  const std::vector<double> weights = {3, 1, 1, 5};
  std::vector<int> counts(weights.size());
  const int total = 100'000;
  for (int i = 0; i < total; ++i) {
    ++counts[AssignSplit("training-" + std::to_string(i / 500) + ".tar",
                         i % 500, /*salt=*/0, weights)];
  }
  for (size_t k = 0; k < weights.size(); ++k) {
    EXPECT_NEAR(counts[k] / static_cast<double>(total), weights[k] / 10, 0.01)
        << "split " << k;
  }
}

TEST(AssignSplitTest, SaltGivesAnIndependentAssignment) {
  int same = 0;
  for (uint64_t i = 0; i < 10'000; ++i) {
    same += AssignSplit("a.tar", i, 0, {1, 1}) ==
            AssignSplit("a.tar", i, 1, {1, 1});
  }
  EXPECT_NEAR(same / 10'000.0, 0.5, 0.03);
}

// Splits the chunks of `dir` into train / validation pools (single pass)
// and returns what each output delivered.
std::map<std::string, std::set<std::pair<std::string, uint64_t>>> SplitRun(
    const std::string& dir) {
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(
      "worker_threads: 2 "
      "stage { name: 'files' file_path_provider { directory: '" +
      dir +
      "' mode: ONCE } } "
      "stage { name: 'loader' input: 'files' chunk_source_loader {} } "
      "stage { name: 'split' input: 'loader' chunk_source_splitter { "
      "  split { name: 'train' weight: 0.8 } "
      "  split { name: 'validation' weight: 0.2 } "
      "  split { name: 'elsewhere' weight: 1.0 discard: true } } } "
      "stage { name: 'train_pool' input: 'split.train' "
      "  shuffling_chunk_pool { single_pass: true } } "
      "stage { name: 'val_pool' input: 'split.validation' "
      "  shuffling_chunk_pool { single_pass: true } } "
      "output: 'train:train_pool' output: 'validation:val_pool'"));
  loader.Start();
  std::map<std::string, std::set<std::pair<std::string, uint64_t>>> result;
  for (const std::string alias : {"train", "validation"}) {
    while (std::optional<Chunk> chunk = NextChunk(loader, alias)) {
      EXPECT_TRUE(result[alias]
                      .insert({chunk->source_name, chunk->index_in_source})
                      .second);
    }
  }
  loader.Stop();
  return result;
}

TEST(ChunkSourceSplitterTest, SplitIsStableDisjointAndFollowsTheHash) {
  TempDir dir;
  for (int t = 0; t < 5; ++t) {
    WriteFile(dir / absl::StrCat("t", t, ".tar"), ChunkTar(400));
  }
  const auto first = SplitRun(dir.path());
  EXPECT_EQ(first, SplitRun(dir.path()));
  const std::vector<double> weights = {0.8, 0.2, 1.0};
  int discarded = 0;
  for (int t = 0; t < 5; ++t) {
    const std::string name = absl::StrCat("t", t, ".tar");
    for (uint64_t i = 0; i < 400; ++i) {
      const size_t split = AssignSplit(name, i, 0, weights);
      EXPECT_EQ(first.at("train").count({name, i}), split == 0 ? 1u : 0u);
      EXPECT_EQ(first.at("validation").count({name, i}), split == 1 ? 1u : 0u);
      discarded += split == 2;
    }
  }
  EXPECT_NEAR(first.at("train").size() / 2000.0, 0.4, 0.05);
  EXPECT_NEAR(first.at("validation").size() / 2000.0, 0.1, 0.03);
  EXPECT_EQ(
      first.at("train").size() + first.at("validation").size() + discarded,
      2000u);
}

TEST(ChunkSourceSplitterTest, ConfigErrors) {
  const struct {
    std::string splits, problem;
  } cases[] = {
      {"", "at least one split"},
      {"split { name: 'a' } split { name: 'a' }", "used twice"},
      {"split { name: 'a' weight: 0 }", "positive"},
      {"split { name: '' }", "split.name"},
      {"split { name: 'a' discard: true }", "at least one split"},
  };
  for (const auto& c : cases) {
    DataLoader loader(CreateStage);
    try {
      loader.Configure(ParseConfig(
          "stage { name: 'files' file_path_provider { directory: '/tmp' } } "
          "stage { name: 'loader' input: 'files' chunk_source_loader {} } "
          "stage { name: 'split' input: 'loader' chunk_source_splitter { " +
          c.splits + " } }"));
      ADD_FAILURE() << "no error for " << c.splits;
    } catch (const ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr(c.problem));
    }
  }
}

}  // namespace
}  // namespace sluice::lc0
