#include "bindings/cli/synthetic_audio.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/bindings/cli/decoded_clip.h"

namespace sluice::cli {
namespace {

using ::sluice::testing::DecodeClip;
using ::sluice::testing::DecodedClip;

TEST(SyntheticAudioTest, ClassesHaveDistinctSounds) {
  std::set<std::tuple<int, double, double, double, bool>> seen;
  for (int64_t label = 0; label < 1000; ++label) {
    const ClassSound sound = SoundOfClass(label);
    EXPECT_EQ(sound.kind, static_cast<SoundKind>(label % 4));
    EXPECT_LT(sound.high_hz, 3600) << label;
    EXPECT_LE(sound.low_hz, sound.high_hz) << label;
    EXPECT_TRUE(seen.emplace(static_cast<int>(sound.kind), sound.low_hz,
                             sound.high_hz, sound.rate_hz, sound.falling)
                    .second)
        << label;
  }
  EXPECT_GT(SoundOfClass(2).high_hz, SoundOfClass(2).low_hz);  // a band
  EXPECT_GT(SoundOfClass(3).rate_hz, 0);                       // clicks
  EXPECT_NE(SoundOfClass(1).falling, SoundOfClass(5).falling);
}

TEST(SyntheticAudioTest, SpecsStayInRangeAndDependOnSeedAndIndex) {
  std::set<int> rates, channels, encodings;
  for (int64_t i = 0; i < 500; ++i) {
    const ClipSpec spec = DrawClipSpec(7, i, 10);
    EXPECT_GE(spec.label, 0);
    EXPECT_LT(spec.label, 10);
    EXPECT_GE(spec.seconds(), kMinClipSeconds);
    EXPECT_LE(spec.seconds(), kMaxClipSeconds);
    EXPECT_GE(spec.amplitude, 0.25f);
    EXPECT_LE(spec.amplitude, 0.8f);
    rates.insert(spec.sample_rate);
    channels.insert(spec.channels);
    encodings.insert(static_cast<int>(spec.encoding));
    const ClipSpec again = DrawClipSpec(7, i, 10);
    EXPECT_EQ(std::tie(again.label, again.frames, again.random_seed),
              std::tie(spec.label, spec.frames, spec.random_seed));
  }
  EXPECT_EQ(rates,
            std::set<int>(kClipSampleRates.begin(), kClipSampleRates.end()));
  EXPECT_EQ(channels, (std::set<int>{1, 2}));
  EXPECT_EQ(encodings.size(), static_cast<size_t>(kAudioEncodings));
  EXPECT_NE(DrawClipSpec(8, 0, 10).random_seed,
            DrawClipSpec(7, 0, 10).random_seed);
}

TEST(SyntheticAudioTest, SamplesPeakAtTheAmplitudeAndFadeIn) {
  for (int64_t label = 0; label < 8; ++label) {
    ClipSpec spec = DrawClipSpec(3, label, 8);
    spec.label = label;
    spec.channels = 2;
    const std::vector<float> samples = SynthesizeClip(spec);
    ASSERT_EQ(static_cast<int64_t>(samples.size()), spec.frames * 2);
    float peak = 0;
    for (float v : samples) peak = std::max(peak, std::abs(v));
    EXPECT_NEAR(peak, spec.amplitude, 1e-3) << label;
    EXPECT_EQ(samples[0], 0.0f) << label;
    EXPECT_EQ(samples[samples.size() - 1], 0.0f) << label;
  }
}

// Every encoding at every sample rate, mono and stereo, decodes with
// libsndfile to the spec's rate, channels and frames, and the same spec
// encodes to the same bytes (Ogg included: its serial number is fixed).
TEST(SyntheticAudioTest, EveryEncodingRoundTripsThroughLibsndfile) {
  for (int e = 0; e < kAudioEncodings; ++e) {
    for (int rate : kClipSampleRates) {
      for (int channels : {1, 2}) {
        ClipSpec spec = DrawClipSpec(11, rate + e, 8);
        spec.encoding = static_cast<AudioEncoding>(e);
        spec.sample_rate = rate;
        spec.channels = channels;
        spec.frames = rate / 2;
        SCOPED_TRACE(::testing::Message()
                     << AudioEncodingName(spec.encoding) << " " << rate
                     << " Hz, " << channels << " channels");
        const std::vector<float> samples = SynthesizeClip(spec);
        absl::StatusOr<std::vector<std::byte>> bytes =
            EncodeClip(spec, samples);
        ASSERT_TRUE(bytes.ok()) << bytes.status();
        absl::StatusOr<std::vector<std::byte>> again =
            EncodeClip(spec, samples);
        ASSERT_TRUE(again.ok()) << again.status();
        EXPECT_EQ(*bytes, *again);
        const DecodedClip clip = DecodeClip(*bytes);
        ASSERT_TRUE(clip.opened);
        EXPECT_EQ(clip.sample_rate, rate);
        EXPECT_EQ(clip.channels, channels);
        EXPECT_EQ(clip.frames, spec.frames);
        EXPECT_EQ(clip.frames_read, spec.frames);
        EXPECT_FALSE(clip.read_error);
        if (spec.encoding != AudioEncoding::kOggVorbis) {  // lossless
          double error = 0;
          for (size_t i = 0; i < samples.size(); ++i) {
            error =
                std::max<double>(error, std::abs(clip.samples[i] - samples[i]));
          }
          EXPECT_LT(error, 1e-4);
        }
      }
    }
  }
  EXPECT_EQ(
      EncodeClip(DrawClipSpec(1, 0, 1), std::vector<float>(3)).status().code(),
      absl::StatusCode::kInvalidArgument);
}

// What libsndfile makes of each kind of damage.
TEST(SyntheticAudioTest, CorruptClipsAndWhatLibsndfileSees) {
  for (int64_t i = 0; i < 10; ++i) {
    const ClipSpec spec = DrawClipSpec(5, i, 8);
    SCOPED_TRACE(i);
    for (int k = 0; k < kCorruptKinds; ++k) {
      const CorruptKind kind = static_cast<CorruptKind>(k);
      SCOPED_TRACE(CorruptKindName(kind));
      absl::StatusOr<std::vector<std::byte>> bytes =
          MakeCorruptClip(kind, spec);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      EXPECT_EQ(*bytes, *MakeCorruptClip(kind, spec));
      const DecodedClip clip = DecodeClip(*bytes);
      switch (kind) {
        case CorruptKind::kRandomBytes:
          EXPECT_GE(bytes->size(), 64u);
          EXPECT_FALSE(clip.opened);
          break;
        case CorruptKind::kEmpty:
          EXPECT_TRUE(bytes->empty());
          EXPECT_FALSE(clip.opened);
          break;
        case CorruptKind::kTruncatedFlac:
          EXPECT_EQ(std::memcmp(bytes->data(), "fLaC", 4), 0);
          ASSERT_TRUE(clip.opened);
          EXPECT_TRUE(clip.read_error || clip.frames_read < spec.frames);
          break;
        case CorruptKind::kWavFrameCountLie: {
          ASSERT_GE(bytes->size(), 44u);
          uint32_t riff_size = 0;
          std::memcpy(&riff_size, bytes->data() + 4, 4);
          EXPECT_GT(riff_size + 8, bytes->size());  // the header promises more
          // libsndfile clamps the data chunk to the file: it opens the clip
          // and reads about half the frames without an error.
          ASSERT_TRUE(clip.opened);
          EXPECT_EQ(clip.frames, clip.frames_read);
          EXPECT_NEAR(clip.frames, spec.frames / 2, 1);
          EXPECT_FALSE(clip.read_error);
          break;
        }
      }
    }
    EXPECT_EQ(ClaimedEncoding(CorruptKind::kTruncatedFlac, spec),
              AudioEncoding::kFlac);
    EXPECT_EQ(ClaimedEncoding(CorruptKind::kEmpty, spec), spec.encoding);
  }
}

}  // namespace
}  // namespace sluice::cli
