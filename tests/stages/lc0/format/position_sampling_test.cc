#include "stages/lc0/format/position_sampling.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "gtest/gtest.h"

namespace sluice::lc0 {
namespace {

constexpr uint64_t kSeed = 0x5eed;

// Chunk hashes as a caller would make them; consecutive on purpose, to show
// that nearby hashes give unrelated decisions.
uint64_t ChunkHash(int c) { return 1000 + c; }

// Allowed deviation of a binomial count: 5 standard deviations.
double Tolerance(double trials, double p) {
  return 5 * std::sqrt(trials * p * (1 - p));
}

TEST(KeepWithProbabilityTest, RateMatchesOneInN) {
  constexpr int kChunks = 400;
  constexpr int kPositions = 200;
  for (double p : {1.0 / 32, 1.0 / 8, 0.5}) {
    int kept = 0;
    for (int c = 0; c < kChunks; ++c) {
      for (int i = 0; i < kPositions; ++i) {
        kept += KeepWithProbability(p, kSeed, ChunkHash(c), i);
      }
    }
    const double trials = kChunks * kPositions;
    EXPECT_NEAR(kept, trials * p, Tolerance(trials, p)) << p;
  }
}

TEST(KeepWithProbabilityTest, EdgesAndDeterminism) {
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(KeepWithProbability(0.0, kSeed, 1, i));
    EXPECT_TRUE(KeepWithProbability(1.0, kSeed, 1, i));
    const bool a = KeepWithProbability(0.5, kSeed, 7, i);
    EXPECT_EQ(a, KeepWithProbability(0.5, kSeed, 7, i));
    differ += a != KeepWithProbability(0.5, kSeed + 1, 7, i);
  }
  // Another seed gives other decisions (about half differ).
  EXPECT_NEAR(differ, 500, Tolerance(1000, 0.5));
}

TEST(UniformDoubleTest, InUnitInterval) {
  for (int i = 0; i < 10000; ++i) {
    const double u = UniformDouble(kSeed, 3, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(ChoosePositionsTest, ExactCountDistinctAscendingDeterministic) {
  for (uint32_t n : {1u, 5u, 60u, 250u}) {
    for (uint32_t k : {0u, 1u, 8u, 300u}) {
      const std::vector<uint32_t> chosen = ChoosePositions(kSeed, n, n, k);
      ASSERT_EQ(chosen.size(), std::min(n, k)) << n << " " << k;
      for (size_t i = 0; i < chosen.size(); ++i) {
        ASSERT_LT(chosen[i], n);
        if (i > 0) {
          ASSERT_LT(chosen[i - 1], chosen[i]);
        }
      }
      EXPECT_EQ(chosen, ChoosePositions(kSeed, n, n, k));
    }
  }
}

TEST(ChoosePositionsTest, EveryPositionEquallyLikely) {
  constexpr int kChunks = 20000;
  constexpr uint32_t kN = 10;
  constexpr uint32_t kK = 3;
  std::vector<int> hits(kN);
  std::set<std::vector<uint32_t>> subsets;
  for (int c = 0; c < kChunks; ++c) {
    const std::vector<uint32_t> chosen =
        ChoosePositions(kSeed, ChunkHash(c), kN, kK);
    for (uint32_t i : chosen) ++hits[i];
    subsets.insert(chosen);
  }
  const double p = static_cast<double>(kK) / kN;
  for (uint32_t i = 0; i < kN; ++i) {
    EXPECT_NEAR(hits[i], kChunks * p, Tolerance(kChunks, p)) << i;
  }
  EXPECT_EQ(subsets.size(), 120u);  // all C(10, 3) subsets occur
}

V6TrainingRecord FocusRecord(float best_q, float orig_q, float kld) {
  V6TrainingRecord rec;
  std::memset(&rec, 0, sizeof(rec));
  rec.version = 6;
  rec.best_q = best_q;
  rec.orig_q = orig_q;
  rec.policy_kld = kld;
  return rec;
}

TEST(DiffFocusTest, RejectsBadParams) {
  EXPECT_FALSE(DiffFocus::Create({.min = 1.5}).ok());
  EXPECT_FALSE(DiffFocus::Create({.min = 0.5, .slope = -1}).ok());
  EXPECT_FALSE(
      DiffFocus::Create({.min = 0.5, .q_weight = 0, .pol_scale = 0}).ok());
  EXPECT_FALSE(
      DiffFocus::Create({.min = std::numeric_limits<double>::quiet_NaN()})
          .ok());
  EXPECT_TRUE(DiffFocus::Create({.min = 0.2, .slope = 2}).ok());
}

TEST(DiffFocusTest, ProbabilityFollowsTheFormula) {
  const DiffFocusParams params{
      .min = 0.1, .slope = 0.5, .q_weight = 6.0, .pol_scale = 3.5};
  absl::StatusOr<DiffFocus> focus = DiffFocus::Create(params);
  ASSERT_TRUE(focus.ok());
  const V6TrainingRecord rec = FocusRecord(0.3f, -0.2f, 0.5f);
  const double total =
      (6.0 * std::abs(double{0.3f} - double{-0.2f}) + double{0.5f}) / 9.5;
  EXPECT_DOUBLE_EQ(focus->KeepProbability(rec), 0.1 + 0.5 * total);
  // Large differences saturate at 1.
  EXPECT_EQ(focus->KeepProbability(FocusRecord(1, -1, 20)), 1.0);
}

TEST(DiffFocusTest, AlwaysKeepsWithoutOrigQOrKld) {
  absl::StatusOr<DiffFocus> focus = DiffFocus::Create({.min = 0.0});
  ASSERT_TRUE(focus.ok());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(focus->KeepProbability(FocusRecord(0.3f, nan, 0.5f)), 1.0);
  EXPECT_EQ(focus->KeepProbability(FocusRecord(0.3f, -0.2f, 0.0f)), 1.0);
  V6TrainingRecord v5 = FocusRecord(0.3f, -0.2f, 0.5f);
  v5.version = 5;
  EXPECT_EQ(focus->KeepProbability(v5), 1.0);
  EXPECT_EQ(focus->KeepProbability(FocusRecord(0.3f, -0.2f, 0.5f)), 0.0);
}

TEST(DiffFocusTest, KeepRateMatchesProbability) {
  absl::StatusOr<DiffFocus> focus =
      DiffFocus::Create({.min = 0.05, .slope = 1.0});
  ASSERT_TRUE(focus.ok());
  const V6TrainingRecord rec = FocusRecord(0.1f, 0.0f, 0.2f);
  const double p = focus->KeepProbability(rec);
  ASSERT_GT(p, 0.05);
  ASSERT_LT(p, 1.0);
  constexpr int kTrials = 50000;
  int kept = 0;
  for (int i = 0; i < kTrials; ++i) {
    kept += focus->Keep(rec, kSeed, ChunkHash(i / 100), i % 100);
  }
  EXPECT_NEAR(kept, kTrials * p, Tolerance(kTrials, p));
}

}  // namespace
}  // namespace sluice::lc0
