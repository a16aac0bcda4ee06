#include "stages/lc0/format/policy_entries.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace sluice::lc0 {
namespace {

// The entries found one at a time, for comparison.
std::vector<uint16_t> NaiveEntries(const V6TrainingRecord& record) {
  std::vector<uint16_t> entries;
  for (size_t i = 0; i < kPolicySize; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &record.probabilities[i], sizeof(bits));
    if (bits != 0xBF800000u) entries.push_back(static_cast<uint16_t>(i));
  }
  return entries;
}

std::vector<uint16_t> Found(const V6TrainingRecord& record) {
  const PolicyEntries entries = PolicyEntries::Find(record);
  return {entries.index.begin(), entries.index.begin() + entries.count};
}

std::unique_ptr<V6TrainingRecord> AllMarkers() {
  auto record = std::make_unique<V6TrainingRecord>();
  std::memset(record.get(), 0, sizeof(*record));
  for (float& p : record->probabilities) p = -1.0f;
  return record;
}

TEST(PolicyEntriesTest, AllMarkersHaveNoEntries) {
  EXPECT_TRUE(Found(*AllMarkers()).empty());
}

TEST(PolicyEntriesTest, EveryValueButTheMarkerIsAnEntry) {
  auto record = AllMarkers();
  // The first and last entries (the last two lie beyond the sixteen-wide
  // scan), and values that compare oddly: -0.0, NaN, infinities, a value
  // next to -1.
  const std::vector<uint16_t> expected = {0, 1, 2, 3, 4, 5, 1856, 1857};
  record->probabilities[0] = -0.0f;
  record->probabilities[1] = std::numeric_limits<float>::quiet_NaN();
  record->probabilities[2] = std::numeric_limits<float>::infinity();
  record->probabilities[3] = -std::numeric_limits<float>::infinity();
  record->probabilities[4] = std::nextafter(-1.0f, 0.0f);
  record->probabilities[5] = 0.0f;
  record->probabilities[1856] = 0.5f;
  record->probabilities[1857] = 0.5f;
  EXPECT_EQ(Found(*record), expected);
}

TEST(PolicyEntriesTest, EveryEntryCanBeLegal) {
  auto record = AllMarkers();
  for (float& p : record->probabilities) p = 0.25f;
  std::vector<uint16_t> expected(kPolicySize);
  for (size_t i = 0; i < kPolicySize; ++i) expected[i] = i;
  EXPECT_EQ(Found(*record), expected);
}

TEST(PolicyEntriesTest, MatchesAOneAtATimeScanOnRandomPolicies) {
  std::mt19937 random(11);
  auto record = AllMarkers();
  for (int round = 0; round < 200; ++round) {
    for (float& p : record->probabilities) {
      // From every entry legal (round 0) to one in eight.
      p = random() % (1 + round % 8) == 0
              ? static_cast<float>(random() % 100) / 100
              : -1.0f;
    }
    EXPECT_EQ(Found(*record), NaiveEntries(*record)) << "round " << round;
  }
}

}  // namespace
}  // namespace sluice::lc0
