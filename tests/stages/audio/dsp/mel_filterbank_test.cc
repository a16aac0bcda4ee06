#include "stages/audio/dsp/mel_filterbank.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sluice::audio {
namespace {

double HtkMel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double HtkHz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1); }

TEST(AudioMelFilterbankTest, Shape) {
  absl::StatusOr<MelFilterbank> mel =
      MelFilterbank::Create({.n_mels = 64}, 16000, 201);
  ASSERT_TRUE(mel.ok()) << mel.status();
  EXPECT_EQ(mel->n_mels(), 64);
  EXPECT_EQ(mel->n_freqs(), 201);
}

// Each band is a triangle: zero at its neighbours' centres, one at its own
// centre (htk, no norm), so between the first and last centres the bands
// sum to one in every bin.
TEST(AudioMelFilterbankTest, HtkTrianglesPartitionUnity) {
  constexpr int kMels = 40;
  constexpr int kFreqs = 513;  // n_fft 1024
  absl::StatusOr<MelFilterbank> mel =
      MelFilterbank::Create({.n_mels = kMels}, 16000, kFreqs);
  ASSERT_TRUE(mel.ok()) << mel.status();
  const double first_centre = HtkHz(HtkMel(8000) / (kMels + 1));
  const double last_centre = HtkHz(HtkMel(8000) * kMels / (kMels + 1));
  for (int f = 0; f < kFreqs; ++f) {
    const double hz = 8000.0 * f / (kFreqs - 1);
    double column = 0;
    float peak = 0;
    for (int m = 0; m < kMels; ++m) {
      column += mel->weight(m, f);
      peak = std::max(peak, mel->weight(m, f));
      ASSERT_GE(mel->weight(m, f), 0.0f);
    }
    if (hz >= first_centre && hz <= last_centre) {
      EXPECT_NEAR(column, 1.0, 1e-5) << f;
    }
    EXPECT_LE(peak, 1.0f);
  }
  // A band is nonzero only strictly between its neighbours' centres.
  const double lower = HtkHz(HtkMel(8000) * 9 / (kMels + 1));
  const double upper = HtkHz(HtkMel(8000) * 11 / (kMels + 1));
  for (int f = 0; f < kFreqs; ++f) {
    const double hz = 8000.0 * f / (kFreqs - 1);
    EXPECT_EQ(mel->weight(9, f) > 0, hz > lower && hz < upper) << f;
  }
}

// Slaney norm scales each triangle by 2 / width, so each has unit area in
// Hz: a row's sum times the bin spacing is about one.
TEST(AudioMelFilterbankTest, SlaneyNormRowsHaveUnitArea) {
  constexpr int kFreqs = 4097;  // n_fft 8192: many bins per band
  absl::StatusOr<MelFilterbank> mel = MelFilterbank::Create(
      {.n_mels = 20, .mel_scale = MelScale::kSlaney, .norm = MelNorm::kSlaney},
      16000, kFreqs);
  ASSERT_TRUE(mel.ok()) << mel.status();
  const double bin_hz = 8000.0 / (kFreqs - 1);
  for (int m = 0; m < 20; ++m) {
    double row = 0;
    for (int f = 0; f < kFreqs; ++f) row += mel->weight(m, f);
    EXPECT_NEAR(row * bin_hz, 1.0, 0.02) << m;
  }
}

// Below 1 kHz the slaney scale is linear: equally spaced centres.
TEST(AudioMelFilterbankTest, SlaneyIsLinearBelowOneKilohertz) {
  // f_max 1000 Hz: 11 points 0, 100, ..., 1000 Hz; band m peaks at
  // 100 * (m + 1) Hz, which is bin 10 * (m + 1) at 10 Hz per bin.
  absl::StatusOr<MelFilterbank> mel = MelFilterbank::Create(
      {.n_mels = 9, .f_max = 1000.0, .mel_scale = MelScale::kSlaney}, 16000,
      801);
  ASSERT_TRUE(mel.ok()) << mel.status();
  for (int m = 0; m < 9; ++m) {
    EXPECT_NEAR(mel->weight(m, 10 * (m + 1)), 1.0f, 1e-5) << m;
    EXPECT_NEAR(mel->weight(m, 10 * (m + 1) + 5), 0.5f, 1e-5) << m;
  }
}

TEST(AudioMelFilterbankTest, ApplyIsTheMatrixProduct) {
  absl::StatusOr<MelFilterbank> mel = MelFilterbank::Create(
      {.n_mels = 16, .f_min = 100.0, .f_max = 7000.0}, 16000, 257);
  ASSERT_TRUE(mel.ok()) << mel.status();
  std::vector<float> spectrum(257);
  for (int f = 0; f < 257; ++f) spectrum[f] = 1.0f + 0.01f * f;
  std::vector<float> bands(16);
  mel->Apply(spectrum, bands);
  for (int m = 0; m < 16; ++m) {
    double expected = 0;
    for (int f = 0; f < 257; ++f) expected += mel->weight(m, f) * spectrum[f];
    EXPECT_NEAR(bands[m], expected, 1e-5 * expected) << m;
    EXPECT_GT(bands[m], 0.0f);
  }
}

void ExpectError(const MelConfig& config, int sample_rate,
                 const std::string& field) {
  absl::StatusOr<MelFilterbank> mel =
      MelFilterbank::Create(config, sample_rate, 201);
  ASSERT_EQ(mel.status().code(), absl::StatusCode::kInvalidArgument) << field;
  EXPECT_NE(mel.status().message().find(field), std::string::npos)
      << mel.status();
}

TEST(AudioMelFilterbankTest, ConfigErrorsNameTheField) {
  ExpectError({.n_mels = 0}, 16000, "n_mels");
  ExpectError({.n_mels = 8, .f_min = -1.0}, 16000, "f_min");
  ExpectError({.n_mels = 8, .f_max = 8000.5}, 16000, "f_max");
  ExpectError({.n_mels = 8, .f_min = 4000.0, .f_max = 4000.0}, 16000, "f_min");
  ExpectError({.n_mels = 8, .f_min = 9000.0}, 16000, "f_min");
  ExpectError({.n_mels = 8}, 0, "sample_rate");
}

}  // namespace
}  // namespace sluice::audio
