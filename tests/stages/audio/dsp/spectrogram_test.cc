#include "stages/audio/dsp/spectrogram.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sluice::audio {
namespace {

std::vector<float> Sine(double hz, int sample_rate, size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(
        std::sin(2 * std::numbers::pi * hz * i / sample_rate + 0.3));
  }
  return x;
}

std::vector<float> Noise(size_t n) {
  std::vector<float> x(n);
  uint32_t state = 12345;
  for (float& v : x) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / (1 << 24) - 0.5f;
  }
  return x;
}

Spectrogram MakeSpectrogram(const SpectrogramConfig& config) {
  absl::StatusOr<Spectrogram> spectrogram = Spectrogram::Create(config);
  EXPECT_TRUE(spectrogram.ok()) << spectrogram.status();
  return *std::move(spectrogram);
}

std::vector<float> Compute(Spectrogram& spectrogram,
                           const std::vector<float>& waveform) {
  std::vector<float> out(spectrogram.OutputSize(waveform.size()));
  const absl::Status status = spectrogram.Compute(waveform, out);
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

TEST(AudioSpectrogramTest, DefaultsAreTorchaudios) {
  Spectrogram spectrogram = MakeSpectrogram({});
  EXPECT_EQ(spectrogram.rows(), 201);  // n_fft 400
  EXPECT_EQ(spectrogram.win_length(), 400);
  EXPECT_EQ(spectrogram.hop_length(), 200);
  Spectrogram windowed = MakeSpectrogram({.n_fft = 512, .win_length = 300});
  EXPECT_EQ(windowed.hop_length(), 150);
  Spectrogram mel = MakeSpectrogram({.mel = MelConfig{}});
  EXPECT_EQ(mel.rows(), 128);
}

TEST(AudioSpectrogramTest, FrameCount) {
  Spectrogram centred = MakeSpectrogram({.n_fft = 400, .hop_length = 160});
  for (size_t length : {201u, 400u, 16000u, 16159u, 16160u, 48000u}) {
    EXPECT_EQ(centred.NumFrames(length), 1 + length / 160) << length;
  }
  EXPECT_EQ(centred.NumFrames(200), 0u);  // reflect padding needs 201
  EXPECT_EQ(centred.OutputSize(16000), 201u * 101);
  Spectrogram odd = MakeSpectrogram({.n_fft = 401, .hop_length = 100});
  EXPECT_EQ(odd.NumFrames(1000), 1 + (1000 + 400 - 401) / 100);
  Spectrogram plain =
      MakeSpectrogram({.n_fft = 400, .hop_length = 160, .center = false});
  EXPECT_EQ(plain.NumFrames(399), 0u);
  EXPECT_EQ(plain.NumFrames(400), 1u);
  EXPECT_EQ(plain.NumFrames(16000), 1 + (16000 - 400) / 160);
}

TEST(AudioSpectrogramTest, SinePeaksAtItsBin) {
  // 40 Hz per bin: 1000 Hz is bin 25, 3020 Hz is bin 75.5 (between 75, 76).
  Spectrogram spectrogram = MakeSpectrogram({.n_fft = 400, .hop_length = 160});
  for (const auto& [hz, bins] :
       {std::pair<double, std::vector<int>>{1000, {25}}, {3020, {75, 76}}}) {
    const std::vector<float> out = Compute(spectrogram, Sine(hz, 16000, 16000));
    const size_t frames = spectrogram.NumFrames(16000);
    // Frames 2 .. frames - 3 lie inside the waveform (no reflected part).
    for (size_t t = 2; t + 2 < frames; ++t) {
      int peak = 0;
      for (int k = 1; k < spectrogram.rows(); ++k) {
        if (out[k * frames + t] > out[peak * frames + t]) peak = k;
      }
      EXPECT_TRUE(std::ranges::count(bins, peak) == 1)
          << hz << " Hz frame " << t << " peaks at " << peak;
    }
  }
}

// Parseval: for one frame, the windowed signal's energy equals the one-sided
// spectrum's energy (bins 1 .. n/2 - 1 counted twice) divided by n.
TEST(AudioSpectrogramTest, ParsevalEnergy) {
  for (int n_fft : {512, 400, 399}) {
    for (int win_length : {n_fft, n_fft - 99}) {
      Spectrogram spectrogram = MakeSpectrogram(
          {.n_fft = n_fft, .win_length = win_length, .center = false});
      const std::vector<float> x = Noise(n_fft);
      const std::vector<float> power = Compute(spectrogram, x);
      ASSERT_EQ(power.size(), size_t(n_fft / 2 + 1));
      double time_energy = 0;
      const int offset = (n_fft - win_length) / 2;
      for (int i = 0; i < win_length; ++i) {
        const double w =
            0.5 - 0.5 * std::cos(2 * std::numbers::pi * i / win_length);
        time_energy += std::pow(x[offset + i] * w, 2);
      }
      double freq_energy = 0;
      for (size_t k = 0; k < power.size(); ++k) {
        const bool single = k == 0 || (n_fft % 2 == 0 && k == power.size() - 1);
        freq_energy += (single ? 1 : 2) * power[k];
      }
      EXPECT_NEAR(freq_energy / n_fft, time_energy, 1e-4 * time_energy)
          << n_fft << " " << win_length;
    }
  }
}

TEST(AudioSpectrogramTest, MagnitudeIsSquareRootOfPower) {
  const std::vector<float> x = Noise(4000);
  Spectrogram power = MakeSpectrogram({.n_fft = 256});
  Spectrogram magnitude = MakeSpectrogram({.n_fft = 256, .power = 1.0});
  const std::vector<float> p = Compute(power, x);
  const std::vector<float> m = Compute(magnitude, x);
  ASSERT_EQ(p.size(), m.size());
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_NEAR(m[i] * m[i], p[i], 1e-5 * p[i] + 1e-12) << i;
  }
}

TEST(AudioSpectrogramTest, MelIsFilterbankTimesPower) {
  const std::vector<float> x = Noise(8000);
  const MelConfig mel_config{.n_mels = 32, .f_min = 50.0};
  Spectrogram linear = MakeSpectrogram({.n_fft = 512, .hop_length = 128});
  Spectrogram mel =
      MakeSpectrogram({.n_fft = 512, .hop_length = 128, .mel = mel_config});
  absl::StatusOr<MelFilterbank> filterbank =
      MelFilterbank::Create(mel_config, 16000, 257);
  ASSERT_TRUE(filterbank.ok());
  const std::vector<float> p = Compute(linear, x);
  const std::vector<float> bands = Compute(mel, x);
  const size_t frames = linear.NumFrames(x.size());
  ASSERT_EQ(bands.size(), 32 * frames);
  for (size_t t = 0; t < frames; t += 7) {
    for (int m = 0; m < 32; ++m) {
      double expected = 0;
      for (int f = 0; f < 257; ++f) {
        expected += filterbank->weight(m, f) * p[f * frames + t];
      }
      EXPECT_NEAR(bands[m * frames + t], expected, 1e-4 * expected);
    }
  }
}

TEST(AudioSpectrogramTest, NaturalLogWithFloor) {
  const std::vector<float> x = Sine(440, 16000, 4000);
  Spectrogram linear = MakeSpectrogram({});
  Spectrogram logged =
      MakeSpectrogram({.log = LogScale::kNaturalLog, .log_floor = 1e-3});
  const std::vector<float> p = Compute(linear, x);
  const std::vector<float> l = Compute(logged, x);
  bool floored = false;
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_NEAR(l[i], std::log(std::max(p[i], 1e-3f)), 1e-5) << i;
    floored |= p[i] < 1e-3f;
  }
  EXPECT_TRUE(floored);  // the floor was exercised
  // Silence is the floor everywhere.
  const std::vector<float> silent = Compute(logged, std::vector<float>(4000));
  for (float v : silent) EXPECT_FLOAT_EQ(v, std::log(1e-3f));
}

TEST(AudioSpectrogramTest, DecibelsWithTopDb) {
  const std::vector<float> x = Sine(440, 16000, 4000);
  for (double power : {1.0, 2.0}) {
    Spectrogram linear = MakeSpectrogram({.power = power});
    Spectrogram db = MakeSpectrogram(
        {.power = power, .log = LogScale::kDecibels, .top_db = 40.0});
    const std::vector<float> p = Compute(linear, x);
    const std::vector<float> d = Compute(db, x);
    const double multiplier = power == 2.0 ? 10 : 20;
    const double max_db = multiplier * std::log10(*std::ranges::max_element(p));
    bool clamped = false;
    for (size_t i = 0; i < p.size(); ++i) {
      const double raw = multiplier * std::log10(std::max(p[i], 1e-10f));
      EXPECT_NEAR(d[i], std::max(raw, max_db - 40), 1e-3) << i;
      clamped |= raw < max_db - 40;
    }
    EXPECT_TRUE(clamped);
    EXPECT_NEAR(*std::ranges::max_element(d), max_db, 1e-3);
  }
}

TEST(AudioSpectrogramTest, ComputeRejectsShortWaveformsAndWrongOutput) {
  Spectrogram spectrogram = MakeSpectrogram({.n_fft = 400});
  std::vector<float> out(spectrogram.OutputSize(201));  // 201 x 2 frames
  ASSERT_EQ(out.size(), 402u);
  EXPECT_EQ(spectrogram.Compute(std::vector<float>(200), out).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(spectrogram.Compute(std::vector<float>(201), out).ok());
  std::vector<float> wrong(403);
  EXPECT_EQ(spectrogram.Compute(std::vector<float>(201), wrong).code(),
            absl::StatusCode::kInvalidArgument);
}

void ExpectError(const SpectrogramConfig& config, const std::string& field) {
  absl::StatusOr<Spectrogram> spectrogram = Spectrogram::Create(config);
  ASSERT_EQ(spectrogram.status().code(), absl::StatusCode::kInvalidArgument)
      << field;
  EXPECT_NE(spectrogram.status().message().find(field), std::string::npos)
      << spectrogram.status();
}

TEST(AudioSpectrogramTest, ConfigErrorsNameTheField) {
  ExpectError({.n_fft = 1}, "n_fft");
  ExpectError({.sample_rate = 0}, "sample_rate");
  ExpectError({.n_fft = 400, .win_length = 401}, "win_length");
  ExpectError({.n_fft = 400, .win_length = 0}, "win_length");
  ExpectError({.hop_length = 0}, "hop_length");
  ExpectError({.n_fft = 400, .win_length = 1}, "hop_length");  // default 0
  ExpectError({.power = 3.0}, "power");
  ExpectError({.log = LogScale::kNaturalLog, .log_floor = 0.0}, "log_floor");
  ExpectError({.top_db = 80.0}, "top_db");
  ExpectError({.log = LogScale::kDecibels, .top_db = -1.0}, "top_db");
  ExpectError({.mel = MelConfig{.n_mels = 0}}, "n_mels");
  ExpectError({.sample_rate = 16000, .mel = MelConfig{.f_max = 9000.0}},
              "f_max");
}

}  // namespace
}  // namespace sluice::audio
