#include "stages/audio/dsp/mel_filterbank.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::audio {
namespace {

// torchaudio.functional.functional._hz_to_mel / _mel_to_hz.
constexpr double kSlaneyHzPerMel = 200.0 / 3;
constexpr double kSlaneyMinLogHz = 1000.0;
constexpr double kSlaneyMinLogMel = kSlaneyMinLogHz / kSlaneyHzPerMel;
const double kSlaneyLogStep = std::log(6.4) / 27.0;

double HzToMel(double hz, MelScale scale) {
  if (scale == MelScale::kHtk) return 2595.0 * std::log10(1.0 + hz / 700.0);
  if (hz < kSlaneyMinLogHz) return hz / kSlaneyHzPerMel;
  return kSlaneyMinLogMel + std::log(hz / kSlaneyMinLogHz) / kSlaneyLogStep;
}

double MelToHz(double mel, MelScale scale) {
  if (scale == MelScale::kHtk) {
    return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
  }
  if (mel < kSlaneyMinLogMel) return mel * kSlaneyHzPerMel;
  return kSlaneyMinLogHz * std::exp(kSlaneyLogStep * (mel - kSlaneyMinLogMel));
}

// torch.linspace(start, end, steps)[i].
double Linspace(double start, double end, int steps, int i) {
  return steps == 1 ? start : start + (end - start) * i / (steps - 1);
}

}  // namespace

absl::StatusOr<MelFilterbank> MelFilterbank::Create(const MelConfig& config,
                                                    int sample_rate,
                                                    int n_freqs) {
  if (config.n_mels < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("mel: n_mels must be >= 1, got ", config.n_mels));
  }
  if (sample_rate < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("mel: sample_rate must be >= 1, got ", sample_rate));
  }
  if (n_freqs < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("mel: n_freqs must be >= 2, got ", n_freqs));
  }
  const double nyquist = sample_rate / 2.0;
  const double f_max = config.f_max.value_or(sample_rate / 2);
  if (!(config.f_min >= 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("mel: f_min must be >= 0, got ", config.f_min));
  }
  if (!(f_max <= nyquist)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mel: f_max (", f_max, ") must be <= sample_rate / 2 (", nyquist, ")"));
  }
  if (!(config.f_min < f_max)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mel: f_min (", config.f_min, ") must be < f_max (", f_max, ")"));
  }

  // melscale_fbanks and _create_triangular_filterbank, in double and
  // rounded once: torchaudio's float32 evaluation rounds the band edges,
  // which moves its own mel energies by up to ~2e-4 relative from its
  // float64 result; these weights match the float64 result to ~1e-7.
  const int n_mels = config.n_mels;
  const double m_min = HzToMel(config.f_min, config.mel_scale);
  const double m_max = HzToMel(f_max, config.mel_scale);
  std::vector<double> f_pts(n_mels + 2);
  for (int i = 0; i < n_mels + 2; ++i) {
    f_pts[i] = MelToHz(Linspace(m_min, m_max, n_mels + 2, i), config.mel_scale);
  }
  std::vector<float> weights(static_cast<size_t>(n_mels) * n_freqs);
  for (int m = 0; m < n_mels; ++m) {
    const double lower = f_pts[m];
    const double centre = f_pts[m + 1];
    const double upper = f_pts[m + 2];
    const double enorm =
        config.norm == MelNorm::kSlaney ? 2.0 / (upper - lower) : 1.0;
    for (int f = 0; f < n_freqs; ++f) {
      const double hz = Linspace(0, sample_rate / 2, n_freqs, f);
      const double down = (hz - lower) / (centre - lower);
      const double up = (upper - hz) / (upper - centre);
      weights[static_cast<size_t>(m) * n_freqs + f] =
          static_cast<float>(std::max(0.0, std::min(down, up)) * enorm);
    }
  }
  return MelFilterbank(n_mels, n_freqs, std::move(weights));
}

MelFilterbank::MelFilterbank(int n_mels, int n_freqs,
                             std::vector<float> weights)
    : n_mels_(n_mels),
      n_freqs_(n_freqs),
      weights_(std::move(weights)),
      first_(n_mels),
      last_(n_mels) {
  for (int m = 0; m < n_mels; ++m) {
    const float* row = &weights_[static_cast<size_t>(m) * n_freqs];
    int first = 0;
    while (first < n_freqs && row[first] == 0.0f) ++first;
    int last = n_freqs;
    while (last > first && row[last - 1] == 0.0f) --last;
    first_[m] = first;
    last_[m] = last;
  }
}

void MelFilterbank::Apply(std::span<const float> spectrum,
                          std::span<float> mels) const {
  for (int m = 0; m < n_mels_; ++m) {
    const float* row = &weights_[static_cast<size_t>(m) * n_freqs_];
    float sum = 0.0f;
    for (int f = first_[m]; f < last_[m]; ++f) sum += row[f] * spectrum[f];
    mels[m] = sum;
  }
}

}  // namespace sluice::audio
