#include "stages/audio/codec/resampler.h"

#include <soxr.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "gtest/gtest.h"
#include "tests/stages/audio/codec/test_clips.h"

namespace sluice::audio {
namespace {

using testing::Sine;

constexpr ResampleQuality kAllQualities[] = {
    ResampleQuality::kQuick, ResampleQuality::kLow, ResampleQuality::kMedium,
    ResampleQuality::kHigh, ResampleQuality::kVeryHigh};

// soxr_oneshot with the recipe the quality names, float32, one thread.
std::vector<float> Oneshot(const std::vector<float>& in, int in_rate,
                           int out_rate, unsigned long recipe) {
  const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  const soxr_quality_spec_t quality = soxr_quality_spec(recipe, 0);
  const soxr_runtime_spec_t runtime = soxr_runtime_spec(1);
  std::vector<float> out(in.size() * out_rate / in_rate + 16);
  size_t produced = 0;
  EXPECT_EQ(
      soxr_oneshot(in_rate, out_rate, 1, in.data(), in.size(), nullptr,
                   out.data(), out.size(), &produced, &io, &quality, &runtime),
      nullptr);
  out.resize(produced);
  return out;
}

// |DFT| of `x` at `frequency`, normalised to a sine's amplitude.
double Amplitude(const std::vector<float>& x, int rate, double frequency) {
  double re = 0, im = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double phase = 2 * std::numbers::pi * frequency * i / rate;
    re += x[i] * std::cos(phase);
    im += x[i] * std::sin(phase);
  }
  return 2 * std::hypot(re, im) / x.size();
}

TEST(AudioResampleQualityTest, Names) {
  for (ResampleQuality quality : kAllQualities) {
    EXPECT_EQ(ResampleQualityFromName(ResampleQualityName(quality)), quality);
  }
  EXPECT_EQ(ResampleQualityFromName("very_high"), ResampleQuality::kVeryHigh);
  EXPECT_EQ(ResampleQualityFromName("quick"), ResampleQuality::kQuick);
  EXPECT_EQ(ResampleQualityFromName("High"), std::nullopt);
  EXPECT_EQ(ResampleQualityFromName(""), std::nullopt);
}

TEST(AudioResamplerTest, SineKeepsItsFrequencyAndAmplitude) {
  for (ResampleQuality quality : kAllQualities) {
    Resampler resampler(quality);
    std::vector<float> out;
    const std::vector<float> in = Sine(44100, 44100, 1000, 0.5);
    ASSERT_TRUE(resampler.Resample(in, 44100, 16000, out).ok());
    ASSERT_EQ(out.size(), 16000u);
    // Away from the edges (filter start-up), over a whole number of periods.
    const std::vector<float> middle(out.begin() + 2000, out.begin() + 14000);
    EXPECT_NEAR(Amplitude(middle, 16000, 1000), 0.5, 0.005)
        << ResampleQualityName(quality);
    EXPECT_LT(Amplitude(middle, 16000, 900), 0.01);
    EXPECT_LT(Amplitude(middle, 16000, 1100), 0.01);
  }
}

TEST(AudioResamplerTest, MatchesSoxrOneshotWhileReused) {
  for (ResampleQuality quality : kAllQualities) {
    Resampler resampler(quality);
    std::vector<float> out;
    // Clips of several lengths and rate pairs through one Resampler.
    for (auto [frames, in_rate, out_rate] : {std::tuple{16000, 48000, 16000},
                                             {12345, 48000, 16000},
                                             {44100, 44100, 16000},
                                             {999, 8000, 16000},
                                             {16000, 48000, 16000},
                                             {5, 22050, 16000}}) {
      const std::vector<float> in = Sine(frames, in_rate, 440, 0.7);
      ASSERT_TRUE(resampler.Resample(in, in_rate, out_rate, out).ok());
      const unsigned long recipe =
          quality == ResampleQuality::kQuick    ? SOXR_QQ
          : quality == ResampleQuality::kLow    ? SOXR_LQ
          : quality == ResampleQuality::kMedium ? SOXR_MQ
          : quality == ResampleQuality::kHigh   ? SOXR_HQ
                                                : SOXR_VHQ;
      EXPECT_EQ(out, Oneshot(in, in_rate, out_rate, recipe))
          << ResampleQualityName(quality) << " " << frames << " " << in_rate;
    }
  }
}

TEST(AudioResamplerTest, OutputLengthFollowsTheFormula) {
  EXPECT_EQ(ResampledFrames(44100, 44100, 16000), 16000u);
  EXPECT_EQ(ResampledFrames(4, 48000, 16000), 1u);  // 1.33
  EXPECT_EQ(ResampledFrames(5, 48000, 16000), 2u);  // 1.67
  EXPECT_EQ(ResampledFrames(3, 44100, 16000), 1u);  // 1.088
  EXPECT_EQ(ResampledFrames(7, 8000, 16000), 14u);
  EXPECT_EQ(ResampledFrames(0, 8000, 16000), 0u);
  Resampler resampler(ResampleQuality::kHigh);
  std::vector<float> out;
  for (int in_rate : {8000, 11025, 22050, 44100, 48000, 96000}) {
    for (size_t frames : {1u, 2u, 3u, 17u, 1000u, 16001u}) {
      const std::vector<float> in(frames, 0.1f);
      ASSERT_TRUE(resampler.Resample(in, in_rate, 16000, out).ok());
      EXPECT_EQ(out.size(), ResampledFrames(frames, in_rate, 16000))
          << frames << " at " << in_rate;
      EXPECT_EQ(out.size(), static_cast<size_t>(
                                std::floor(frames * 16000.0 / in_rate + 0.5)));
    }
  }
}

TEST(AudioResamplerTest, SameRateCopies) {
  Resampler resampler(ResampleQuality::kHigh);
  const std::vector<float> in = Sine(1000, 16000, 440, 0.5);
  std::vector<float> out = {1, 2, 3};
  ASSERT_TRUE(resampler.Resample(in, 16000, 16000, out).ok());
  EXPECT_EQ(out, in);
}

TEST(AudioResamplerTest, EmptyInputAndBadRates) {
  Resampler resampler(ResampleQuality::kLow);
  std::vector<float> out = {1, 2};
  ASSERT_TRUE(resampler.Resample({}, 48000, 16000, out).ok());
  EXPECT_TRUE(out.empty());
  const std::vector<float> in(10, 0.5f);
  out = {1};
  EXPECT_EQ(resampler.Resample(in, 0, 16000, out).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(resampler.Resample(in, 16000, -1, out).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AudioResamplerTest, MovedResamplerKeepsWorking) {
  Resampler first(ResampleQuality::kMedium);
  std::vector<float> out;
  const std::vector<float> in = Sine(4800, 48000, 440, 0.5);
  ASSERT_TRUE(first.Resample(in, 48000, 16000, out).ok());
  Resampler second = std::move(first);
  std::vector<float> again;
  ASSERT_TRUE(second.Resample(in, 48000, 16000, again).ok());
  EXPECT_EQ(again, out);
  EXPECT_EQ(second.quality(), ResampleQuality::kMedium);
}

}  // namespace
}  // namespace sluice::audio
