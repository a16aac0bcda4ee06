#include "stages/lc0/shuffling_frame_sampler.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "engine/data_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/stages/lc0/chunk_test_util.h"
#include "tests/stages/lc0/frame_test_util.h"
#include "tests/testing/sanitizers.h"

namespace sluice::lc0 {
namespace {

using ::sluice::lc0::testing::FactoryWithSource;
using ::sluice::lc0::testing::LabelledFrames;
using ::sluice::lc0::testing::ParseConfig;
using ::sluice::lc0::testing::StageTotals;
using ::sluice::lc0::testing::Unpacked;
using ::sluice::lc0::testing::WaitUntil;
using ::sluice::testing::UnlessSanitizer;
using ::testing::HasSubstr;

// source (frames 0..count-1) -> sampler with `sampler_config`.
std::string Config(const std::string& sampler_config, uint64_t seed = 1) {
  return absl::StrCat(R"pb(
                        worker_threads: 2 seed:)pb",
                      seed, R"pb(
                        stage {
                          name: "source"
                          counting_source {}
                        }
                        stage { name: "sampler" input: "source"
                                shuffling_frame_sampler {)pb",
                      sampler_config, "} }");
}

// Runs the pipeline to the end; the game ids (labels) in output order.
std::vector<uint64_t> RunSampler(const std::string& sampler_config,
                                 uint64_t count, uint64_t seed = 1) {
  DataLoader loader(FactoryWithSource("source", LabelledFrames(count)));
  loader.Configure(ParseConfig(Config(sampler_config, seed)));
  loader.Start();
  std::vector<uint64_t> labels;
  while (std::optional<Frame> frame = loader.GetNext<Frame>()) {
    EXPECT_EQ(Unpacked(*frame).reserved, frame->game_id);
    labels.push_back(frame->game_id);
  }
  return labels;
}

TEST(ShufflingFrameSamplerTest, ConfigErrorsNameStageAndField) {
  for (const auto& [config, field] :
       {std::pair<std::string, std::string>{
            "reservoir_size: 0", "shuffling_frame_sampler.reservoir_size"},
        {"reservoir_size: 10 min_fill: 11",
         "shuffling_frame_sampler.min_fill"}}) {
    DataLoader loader(FactoryWithSource("source", LabelledFrames(1)));
    try {
      loader.Configure(ParseConfig(Config(config)));
      ADD_FAILURE() << "accepted " << config;
    } catch (const ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr("'sampler'"));
      EXPECT_THAT(error.what(), HasSubstr(field));
    }
  }
}

TEST(ShufflingFrameSamplerTest, FiniteOutputIsAPermutationOfTheInput) {
  for (const char* config :
       {"reservoir_size: 100", "reservoir_size: 100 min_fill: 10",
        "reservoir_size: 100 min_fill: 0", "reservoir_size: 5000"}) {
    const std::vector<uint64_t> labels = RunSampler(config, 3000);
    std::vector<uint64_t> sorted = labels;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint64_t> expected(3000);
    for (uint64_t i = 0; i < 3000; ++i) expected[i] = i;
    EXPECT_EQ(sorted, expected) << config;  // nothing lost or duplicated
    // And it did shuffle; with min_fill 0 a consumer that keeps up may see
    // every frame pass straight through, in order.
    if (std::string_view(config).find("min_fill: 0") ==
        std::string_view::npos) {
      EXPECT_NE(labels, expected) << config;
    }
  }
}

TEST(ShufflingFrameSamplerTest, SameSeedSameOrderOtherSeedOtherOrder) {
  const std::vector<uint64_t> a = RunSampler("reservoir_size: 64", 2000, 5);
  EXPECT_EQ(RunSampler("reservoir_size: 64", 2000, 5), a);
  EXPECT_NE(RunSampler("reservoir_size: 64", 2000, 6), a);
}

// With a full reservoir of N, each incoming frame evicts a uniformly chosen
// resident: ranked by arrival among the N residents, the evicted one's rank
// is uniform on 0..N-1, independently at every step. Chi-square over a
// seeded run (a shorter one under a sanitizer: still 500 expected per
// rank).
TEST(ShufflingFrameSamplerTest, EvictionIsUniformChiSquare) {
  constexpr uint64_t kReservoir = 16;
  constexpr uint64_t kFrames = UnlessSanitizer<uint64_t>(32000, 8016);
  const std::vector<uint64_t> labels = RunSampler(
      absl::StrCat("reservoir_size: ", kReservoir), kFrames, /*seed=*/42);
  ASSERT_EQ(labels.size(), kFrames);
  std::set<uint64_t> residents;
  for (uint64_t i = 0; i < kReservoir; ++i) residents.insert(i);
  std::vector<double> counts(kReservoir, 0.0);
  const uint64_t replacements = kFrames - kReservoir;
  for (uint64_t step = 0; step < replacements; ++step) {
    const auto it = residents.find(labels[step]);
    ASSERT_NE(it, residents.end()) << "step " << step;
    counts[std::distance(residents.begin(), it)] += 1;
    residents.erase(it);
    residents.insert(kReservoir + step);  // the incoming frame
  }
  const double expected = static_cast<double>(replacements) / kReservoir;
  double chi_square = 0;
  for (double count : counts) {
    chi_square += (count - expected) * (count - expected) / expected;
  }
  // 15 degrees of freedom: P(chi2 > 37.7) = 0.001.
  EXPECT_LT(chi_square, 37.7);
}

TEST(ShufflingFrameSamplerTest, MetricsCountFramesFillAndCapacity) {
  DataLoader loader(FactoryWithSource("source", LabelledFrames(1000)));
  loader.Configure(ParseConfig(Config("reservoir_size: 500 min_fill: 200")));
  loader.Start();
  uint64_t out = 0;
  while (loader.GetNext<Frame>()) ++out;
  EXPECT_EQ(out, 1000u);
  loader.Stop();
  const ShufflingFrameSamplerMetricsProto totals =
      StageTotals(loader, "sampler").shuffling_frame_sampler();
  EXPECT_EQ(totals.capacity(), 500u);
  EXPECT_EQ(totals.frames_received(), 1000u);
  EXPECT_EQ(totals.frames_emitted(), 1000u);
  EXPECT_EQ(totals.fill(), 0u);  // drained
}

// resident_bytes is what the frames in the reservoir hold: with nobody
// reading, the reservoir grows past min_fill and the gauge (published with
// the fill, once per group of frames taken in) settles at fill times one
// frame's bytes; it falls to 0 once the frames are drained.
TEST(ShufflingFrameSamplerTest, ResidentBytesFollowTheFill) {
  const uint64_t frame_bytes =
      ResidentBytes(LabelledFrames(1).front());  // all alike
  EXPECT_GT(frame_bytes, sizeof(Frame));
  DataLoader loader(FactoryWithSource("source", LabelledFrames(1000)));
  loader.Configure(ParseConfig(Config("reservoir_size: 500 min_fill: 200")));
  loader.Start();
  ShufflingFrameSamplerMetricsProto sampler;
  EXPECT_TRUE(WaitUntil([&] {
    sampler = StageTotals(loader, "sampler").shuffling_frame_sampler();
    return sampler.fill() >= 200 &&
           sampler.resident_bytes() == sampler.fill() * frame_bytes;
  })) << sampler.fill()
      << " frames, " << sampler.resident_bytes() << " bytes";
  uint64_t out = 0;
  while (loader.GetNext<Frame>()) ++out;
  EXPECT_EQ(out, 1000u);
  loader.Stop();
  EXPECT_EQ(
      StageTotals(loader, "sampler").shuffling_frame_sampler().resident_bytes(),
      0u);
}

TEST(ShufflingFrameSamplerTest, MinFillHonoured) {
  // With min_fill M, the first frame out is one of the first M+1 frames
  // in: nothing leaves before the M+1-th arrives (the output has room, so
  // without the threshold frame 0 would pass straight through).
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<uint64_t> labels =
        RunSampler("reservoir_size: 300 min_fill: 100", 1000, seed);
    ASSERT_FALSE(labels.empty());
    EXPECT_LE(labels.front(), 100u);
  }
}

TEST(ShufflingFrameSamplerTest, MinFillZeroWithRoomPassesThrough) {
  // The output (capacity 256) always has room for 200 frames: each frame
  // leaves as soon as it arrives.
  std::vector<uint64_t> labels =
      RunSampler("reservoir_size: 1000 min_fill: 0", 200);
  std::vector<uint64_t> expected(200);
  for (uint64_t i = 0; i < 200; ++i) expected[i] = i;
  EXPECT_EQ(labels, expected);
}

}  // namespace
}  // namespace sluice::lc0
