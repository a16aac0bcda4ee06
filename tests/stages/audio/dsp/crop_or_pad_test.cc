#include "stages/audio/dsp/crop_or_pad.h"

#include <cstdint>
#include <initializer_list>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace sluice::audio {
namespace {

// Seed 004's splitmix64 and crop formula, written out again here so the
// test does not trust the code under test.
uint64_t SeedSplitMix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t SeedRandomStart(uint64_t length, uint64_t clip_length, uint64_t seed,
                         int64_t index) {
  const uint64_t max_start = length - clip_length;
  return SeedSplitMix64(seed ^
                        static_cast<uint64_t>(index) * 0xD6E8FEB86659FD93ULL) %
         (max_start + 1);
}

std::vector<float> Ramp(size_t n) {
  std::vector<float> ramp(n);
  for (size_t i = 0; i < n; ++i) ramp[i] = static_cast<float>(i + 1);
  return ramp;
}

TEST(AudioCropStartTest, TrainFollowsTheSeedFormula) {
  for (uint64_t seed : {0ULL, 1ULL, 42ULL, 0xDEADBEEFULL, ~0ULL}) {
    for (int64_t index :
         std::initializer_list<int64_t>{0, 1, 7, -1, 123456789, INT64_MIN}) {
      for (uint64_t length : {16001ULL, 16007ULL, 48000ULL, 1000003ULL}) {
        EXPECT_EQ(
            CropStart(length, 16000, seed, index, CropMode::kTrain),
            static_cast<int64_t>(SeedRandomStart(length, 16000, seed, index)))
            << seed << " " << index << " " << length;
      }
    }
  }
}

TEST(AudioCropStartTest, TrainKnownValues) {
  // Computed in Python from the seed's formula (tests/python checks the
  // binding the same way).
  EXPECT_EQ(CropStart(48000, 16000, 42, 7, CropMode::kTrain), 28428);
  EXPECT_EQ(CropStart(48000, 16000, 0, 0, CropMode::kTrain), 26617);
  EXPECT_EQ(CropStart(48000, 16000, 0xDEADBEEF, -1, CropMode::kTrain), 29857);
  EXPECT_EQ(CropStart(48000, 16000, 123, 1000000, CropMode::kTrain), 23817);
}

TEST(AudioCropStartTest, TrainPositionsCoverTheRangeAndDependOnTheSeed) {
  std::set<int64_t> starts;
  int same_as_other_seed = 0;
  for (int64_t index = 0; index < 1000; ++index) {
    const int64_t start = CropStart(100, 90, 5, index, CropMode::kTrain);
    ASSERT_GE(start, 0);
    ASSERT_LE(start, 10);
    starts.insert(start);
    EXPECT_EQ(start, CropStart(100, 90, 5, index, CropMode::kTrain));
    same_as_other_seed +=
        start == CropStart(100, 90, 6, index, CropMode::kTrain);
  }
  EXPECT_EQ(starts.size(), 11u);            // every start is reached
  EXPECT_LT(same_as_other_seed, 1000 / 5);  // ~1/11 by chance
}

TEST(AudioCropStartTest, EvalIsCentred) {
  EXPECT_EQ(CropStart(10, 4, 1, 2, CropMode::kEval), 3);
  EXPECT_EQ(CropStart(11, 4, 1, 2, CropMode::kEval), 3);  // (11 - 4) / 2
  EXPECT_EQ(CropStart(48000, 16000, 9, 9, CropMode::kEval), 16000);
  // Seed and index do not matter.
  EXPECT_EQ(CropStart(10, 4, 7, 8, CropMode::kEval), 3);
}

TEST(AudioCropStartTest, ShortAndExactWaveforms) {
  EXPECT_EQ(CropStart(5, 8, 1, 2, CropMode::kTrain), 0);
  EXPECT_EQ(CropStart(5, 8, 1, 2, CropMode::kEval), -1);  // pad_left 3 / 2
  EXPECT_EQ(CropStart(4, 8, 1, 2, CropMode::kEval), -2);
  EXPECT_EQ(CropStart(0, 8, 1, 2, CropMode::kEval), -4);
  EXPECT_EQ(CropStart(8, 8, 1, 2, CropMode::kTrain), 0);
  EXPECT_EQ(CropStart(8, 8, 1, 2, CropMode::kEval), 0);
}

TEST(AudioCropOrPadTest, TrainPadsAtTheEnd) {
  std::vector<float> clip(8, -1.0f);
  CropOrPad(Ramp(5), 1, 2, CropMode::kTrain, clip);
  EXPECT_EQ(clip, (std::vector<float>{1, 2, 3, 4, 5, 0, 0, 0}));
}

TEST(AudioCropOrPadTest, EvalPadsBothSidesExtraOnTheRight) {
  std::vector<float> clip(8, -1.0f);
  CropOrPad(Ramp(5), 1, 2, CropMode::kEval, clip);
  EXPECT_EQ(clip, (std::vector<float>{0, 1, 2, 3, 4, 5, 0, 0}));
  std::vector<float> empty_clip(3, -1.0f);
  CropOrPad({}, 1, 2, CropMode::kEval, empty_clip);
  EXPECT_EQ(empty_clip, (std::vector<float>{0, 0, 0}));
}

TEST(AudioCropOrPadTest, CropsAtTheStart) {
  const std::vector<float> waveform = Ramp(100);
  std::vector<float> clip(10);
  CropOrPad(waveform, 42, 7, CropMode::kTrain, clip);
  const uint64_t start = SeedRandomStart(100, 10, 42, 7);
  EXPECT_EQ(clip, std::vector<float>(waveform.begin() + start,
                                     waveform.begin() + start + 10));
  CropOrPad(waveform, 42, 7, CropMode::kEval, clip);
  EXPECT_EQ(clip,
            std::vector<float>(waveform.begin() + 45, waveform.begin() + 55));
}

TEST(AudioCopyClipTest, ZeroOutsideTheWaveform) {
  const std::vector<float> waveform = Ramp(4);
  std::vector<float> clip(3, -1.0f);
  CopyClip(waveform, 2, clip);
  EXPECT_EQ(clip, (std::vector<float>{3, 4, 0}));
  CopyClip(waveform, -2, clip);
  EXPECT_EQ(clip, (std::vector<float>{0, 0, 1}));
  CopyClip(waveform, 10, clip);
  EXPECT_EQ(clip, (std::vector<float>{0, 0, 0}));
  CopyClip(waveform, -10, clip);
  EXPECT_EQ(clip, (std::vector<float>{0, 0, 0}));
  std::vector<float> wide(8, -1.0f);
  CopyClip(waveform, -2, wide);
  EXPECT_EQ(wide, (std::vector<float>{0, 0, 1, 2, 3, 4, 0, 0}));
}

}  // namespace
}  // namespace sluice::audio
