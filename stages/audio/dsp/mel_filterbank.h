// MelFilterbank: triangular mel filters over the bins of a one-sided
// spectrum, exactly as torchaudio.functional.melscale_fbanks (0.13): bin
// frequencies linspace(0, sample_rate // 2, n_freqs), n_mels + 2 points
// equally spaced on the mel scale from f_min to f_max, one triangle per
// mel band, optionally area-normalized ("slaney" norm).
//
//   SLUICE_ASSIGN_OR_RETURN(MelFilterbank mel,
//       MelFilterbank::Create({.n_mels = 64}, 16000, /*n_freqs=*/201));
//   mel.Apply(power_spectrum, mel_energies);  // 201 values -> 64 values
#ifndef SLUICE_STAGES_AUDIO_DSP_MEL_FILTERBANK_H_
#define SLUICE_STAGES_AUDIO_DSP_MEL_FILTERBANK_H_

#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::audio {

// torchaudio's mel_scale: "htk" (2595 * log10(1 + f / 700)) or "slaney"
// (linear below 1 kHz, logarithmic above).
enum class MelScale { kHtk, kSlaney };
// torchaudio's norm: None, or "slaney" (each filter divided by its width
// in Hz over 2, so that it has unit area).
enum class MelNorm { kNone, kSlaney };

// The mel knobs of torchaudio.transforms.MelSpectrogram, same defaults.
struct MelConfig {
  int n_mels = 128;
  double f_min = 0.0;
  // Unset: sample_rate / 2 rounded down (torchaudio: float(sample_rate // 2)).
  std::optional<double> f_max;
  MelScale mel_scale = MelScale::kHtk;
  MelNorm norm = MelNorm::kNone;
};

class MelFilterbank {
 public:
  // InvalidArgument, naming the field, unless n_mels >= 1, 0 <= f_min <
  // f_max <= sample_rate / 2, sample_rate >= 1 and n_freqs >= 2.
  static absl::StatusOr<MelFilterbank> Create(const MelConfig& config,
                                              int sample_rate, int n_freqs);

  int n_mels() const { return n_mels_; }
  int n_freqs() const { return n_freqs_; }

  // The weight of frequency bin `freq` in band `mel`: torchaudio's
  // fb[freq, mel]. Zero outside the band's triangle.
  float weight(int mel, int freq) const {
    return weights_[static_cast<size_t>(mel) * n_freqs_ + freq];
  }

  // mels[m] = sum over f of weight(m, f) * spectrum[f], in float, over the
  // nonzero weights only. spectrum.size() == n_freqs(), mels.size() ==
  // n_mels(). Allocates nothing.
  void Apply(std::span<const float> spectrum, std::span<float> mels) const;

 private:
  MelFilterbank(int n_mels, int n_freqs, std::vector<float> weights);

  int n_mels_;
  int n_freqs_;
  std::vector<float> weights_;  // (n_mels, n_freqs), row-major
  // Band m has nonzero weights only in bins [first_[m], last_[m]).
  std::vector<int> first_;
  std::vector<int> last_;
};

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_DSP_MEL_FILTERBANK_H_
