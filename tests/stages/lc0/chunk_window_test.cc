#include "stages/lc0/internal/chunk_window.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/stages/lc0/chunk_test_util.h"

namespace sluice::lc0 {
namespace {

using testing::ChunkTar;
using testing::OpenIndexed;
using testing::TempDir;
using testing::WriteFile;

// Indexed tar sources "t<k>.tar" of the given sizes.
std::vector<std::shared_ptr<ChunkSource>> MakeSources(
    const TempDir& dir, const std::vector<int>& sizes) {
  std::vector<std::shared_ptr<ChunkSource>> sources;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const std::string path = dir / absl::StrCat("t", k, ".tar");
    WriteFile(path, ChunkTar(sizes[k], 1000 * static_cast<int>(k)));
    sources.push_back(OpenIndexed(path));
    EXPECT_EQ(sources.back()->size(), static_cast<size_t>(sizes[k]));
  }
  return sources;
}

using Key = std::pair<std::string, size_t>;

Key KeyOf(const ChunkWindow::Draw& draw) {
  return {draw.source->name(), draw.local_index};
}

TEST(ChunkWindowTest, EveryPassCoversTheWindowOnceWithoutRepeats) {
  TempDir dir;
  auto sources = MakeSources(dir, {700, 900, 1100, 600});  // 3300 chunks
  ChunkWindow window(/*capacity=*/10000, /*single_pass=*/false, /*seed=*/5);
  for (auto& source : sources) window.Add(source);
  ASSERT_EQ(window.chunks(), 3300u);
  for (uint64_t pass = 0; pass < 3; ++pass) {
    std::set<Key> seen;
    for (int i = 0; i < 3300; ++i) {
      std::optional<ChunkWindow::Draw> draw = window.Next();
      ASSERT_TRUE(draw.has_value());
      EXPECT_EQ(draw->pass, pass);
      EXPECT_TRUE(seen.insert(KeyOf(*draw)).second) << "repeat in a pass";
    }
    EXPECT_EQ(seen.size(), 3300u);
  }
  EXPECT_EQ(window.passes(), 2u);
}

TEST(ChunkWindowTest, KeepsTheNewestChunksAndDropsWholeOldSources) {
  TempDir dir;
  auto sources = MakeSources(dir, {100, 100, 100, 100});
  ChunkWindow window(/*capacity=*/250, /*single_pass=*/false, /*seed=*/1);
  window.Add(sources[0]);
  window.Add(sources[1]);
  window.Add(sources[2]);
  // 300 chunks: the oldest 50 (half of t0) left the window; t0 stays.
  EXPECT_EQ(window.chunks(), 250u);
  EXPECT_EQ(window.sources(), 3u);
  EXPECT_EQ(window.chunks_dropped(), 50u);
  window.Add(sources[3]);
  EXPECT_EQ(window.sources(), 3u);  // t0 dropped whole
  EXPECT_EQ(window.chunks_dropped(), 150u);
  // Draw far more than a pass: only the newest 250 chunks ever come out.
  std::map<std::string, std::set<size_t>> seen;
  for (int i = 0; i < 2000; ++i) {
    std::optional<ChunkWindow::Draw> draw = window.Next();
    ASSERT_TRUE(draw.has_value());
    seen[draw->source->name()].insert(draw->local_index);
  }
  EXPECT_EQ(seen.count("t0.tar"), 0u);
  EXPECT_EQ(seen["t1.tar"].size(), 50u);
  EXPECT_EQ(*seen["t1.tar"].begin(), 50u);
  EXPECT_EQ(seen["t2.tar"].size(), 100u);
  EXPECT_EQ(seen["t3.tar"].size(), 100u);
}

TEST(ChunkWindowTest, ChunksAddedMidPassJoinIt) {
  TempDir dir;
  auto sources = MakeSources(dir, {200, 200});
  ChunkWindow window(/*capacity=*/1000, /*single_pass=*/false, /*seed=*/2);
  window.Add(sources[0]);
  std::set<Key> seen;
  for (int i = 0; i < 100; ++i) seen.insert(KeyOf(*window.Next()));
  window.Add(sources[1]);
  for (int i = 0; i < 300; ++i) {
    std::optional<ChunkWindow::Draw> draw = window.Next();
    EXPECT_EQ(draw->pass, 0u);
    EXPECT_TRUE(seen.insert(KeyOf(*draw)).second);
  }
  EXPECT_EQ(seen.size(), 400u);
  EXPECT_EQ(window.Next()->pass, 1u);
}

TEST(ChunkWindowTest, SinglePassDrawsEachChunkOnceThenStops) {
  TempDir dir;
  auto sources = MakeSources(dir, {300, 5});
  ChunkWindow window(/*capacity=*/1, /*single_pass=*/true, /*seed=*/3);
  window.Add(sources[0]);
  window.Add(sources[1]);
  std::set<Key> seen;
  while (std::optional<ChunkWindow::Draw> draw = window.Next()) {
    EXPECT_TRUE(seen.insert(KeyOf(*draw)).second);
  }
  EXPECT_EQ(seen.size(), 305u);
  EXPECT_EQ(window.chunks_dropped(), 0u);
}

TEST(ChunkWindowTest, SameSeedSameOrderOtherSeedOtherOrder) {
  TempDir dir;
  auto sources = MakeSources(dir, {500});
  auto order = [&](uint64_t seed) {
    ChunkWindow window(1000, false, seed);
    window.Add(sources[0]);
    std::vector<size_t> picks;
    for (int i = 0; i < 500; ++i) picks.push_back(window.Next()->local_index);
    return picks;
  };
  EXPECT_EQ(order(11), order(11));
  EXPECT_NE(order(11), order(12));
}

TEST(ChunkWindowTest, Anchors) {
  TempDir dir;
  auto sources = MakeSources(dir, {10, 20, 30});
  ChunkWindow window(1000, false, 4);
  window.Add(sources[0]);
  window.Add(sources[1]);
  EXPECT_EQ(window.anchor(), "");
  EXPECT_EQ(window.chunks_since_anchor(), 30u);
  window.ResetAnchor();
  EXPECT_EQ(window.anchor(), "t1.tar");
  EXPECT_EQ(window.chunks_since_anchor(), 0u);
  window.Add(sources[2]);
  EXPECT_EQ(window.chunks_since_anchor(), 30u);
  window.SetAnchor("t0.tar");
  EXPECT_EQ(window.anchor(), "t0.tar");
  EXPECT_EQ(window.chunks_since_anchor(), 50u);
}

}  // namespace
}  // namespace sluice::lc0

namespace sluice::lc0 {
namespace {

TEST(ChunkWindowTest, ARestoredWindowDrawsWhatTheSavedOneDrawsNext) {
  TempDir dir;
  auto sources = MakeSources(dir, {50, 150, 120, 80});
  ChunkWindow window(/*capacity=*/250, /*single_pass=*/false, /*seed=*/9);
  window.Add(sources[0]);
  window.Add(sources[1]);
  for (int i = 0; i < 170; ++i) ASSERT_TRUE(window.Next().has_value());
  window.Add(sources[2]);  // evicts the first source
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(window.Next().has_value());
  ChunkPoolCheckpoint saved;
  window.Save(&saved);
  ASSERT_EQ(saved.source_size(), 2);

  ChunkWindow restored(/*capacity=*/250, /*single_pass=*/false, /*seed=*/1);
  restored.Restore(saved, [&](const ChunkPoolCheckpoint::Source& record) {
    for (const auto& source : sources) {
      if (source->name() == record.name())
        return std::shared_ptr<const ChunkSource>(source);
    }
    return std::shared_ptr<const ChunkSource>();
  });
  EXPECT_EQ(restored.chunks(), window.chunks());
  // The history of sources outlives eviction (the pool saves the sources
  // that references name out of the window itself).
  ASSERT_NE(window.RecordOf(0), nullptr);
  EXPECT_EQ(window.RecordOf(0)->name, sources[0]->name());
  window.Add(sources[3]);
  restored.Add(sources[3]);
  for (int i = 0; i < 700; ++i) {
    std::optional<ChunkWindow::Draw> a = window.Next();
    std::optional<ChunkWindow::Draw> b = restored.Next();
    ASSERT_TRUE(a.has_value() && b.has_value());
    EXPECT_EQ(a->number, b->number) << "draw " << i;
    EXPECT_EQ(KeyOf(*a), KeyOf(*b)) << "draw " << i;
    EXPECT_EQ(a->pass, b->pass) << "draw " << i;
  }
}

TEST(ChunkWindowTest, DrawsOfAMissingSourceHaveNoSource) {
  TempDir dir;
  auto sources = MakeSources(dir, {30, 30});
  ChunkWindow window(/*capacity=*/100, /*single_pass=*/true, /*seed=*/2);
  window.Add(sources[0]);
  window.Add(sources[1]);
  ChunkPoolCheckpoint saved;
  window.Save(&saved);
  ChunkWindow restored(/*capacity=*/100, /*single_pass=*/true, /*seed=*/2);
  restored.Restore(saved, [&](const ChunkPoolCheckpoint::Source& record) {
    return record.name() == sources[0]->name()
               ? std::shared_ptr<const ChunkSource>(sources[0])
               : nullptr;
  });
  int without_source = 0, draws = 0;
  while (std::optional<ChunkWindow::Draw> draw = restored.Next()) {
    ++draws;
    if (draw->source == nullptr) ++without_source;
  }
  EXPECT_EQ(draws, 60);
  EXPECT_EQ(without_source, 30);
}

}  // namespace
}  // namespace sluice::lc0
