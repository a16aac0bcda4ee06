// Spectrogram: the (mel) spectrogram of a waveform, with the defaults and
// meanings of torchaudio.transforms.Spectrogram / MelSpectrogram (0.13)
// followed by an optional log (natural log with a floor, or
// AmplitudeToDB). Created once (FFT plan, window and filterbank
// precomputed), then Compute() per clip without allocating.
//
//   SLUICE_ASSIGN_OR_RETURN(Spectrogram spectrogram, Spectrogram::Create(
//       {.n_fft = 400, .hop_length = 160, .mel = MelConfig{.n_mels = 64}}));
//   std::vector<float> out(spectrogram.OutputSize(waveform.size()));
//   SLUICE_RETURN_IF_ERROR(spectrogram.Compute(waveform, out));
//   // out: float32 row-major (rows(), NumFrames(waveform.size()))
//
// STFT: frame t covers samples [t * hop_length, t * hop_length + n_fft) of
// the waveform, reflect-padded by n_fft / 2 on both sides when `center`;
// each frame is multiplied by a periodic Hann window of win_length samples
// centred in n_fft (zeros on both sides, left (n_fft - win_length) / 2), as
// torch.stft does; one-sided, unnormalized bins |X[k]|^power.
//
// Threading: one object must not be used by two threads at once (Compute
// writes its FFT buffers and scratch); give each worker (coroutine) its own.
// Creating objects concurrently is safe.
#ifndef SLUICE_STAGES_AUDIO_DSP_SPECTROGRAM_H_
#define SLUICE_STAGES_AUDIO_DSP_SPECTROGRAM_H_

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "stages/audio/dsp/mel_filterbank.h"
#include "stages/audio/dsp/real_fft.h"

namespace sluice::audio {

// The log applied last, per spectrogram.
enum class LogScale {
  kNone,
  // log(max(x, log_floor)), natural log.
  kNaturalLog,
  // torchaudio AmplitudeToDB with amin 1e-10 and ref 1: 10 * log10(max(x,
  // 1e-10)) for power 2, 20 * log10(...) for power 1; with top_db, values
  // below (the spectrogram's maximum - top_db) are raised to it.
  kDecibels,
};

struct SpectrogramConfig {
  int sample_rate = 16000;  // used by the mel filterbank only
  int n_fft = 400;
  std::optional<int> win_length;  // unset: n_fft
  std::optional<int> hop_length;  // unset: win_length / 2
  double power = 2.0;             // 1 (magnitude) or 2 (power)
  bool center = true;             // reflect-pad n_fft / 2 on both sides
  std::optional<MelConfig> mel;   // unset: n_fft / 2 + 1 linear bins
  LogScale log = LogScale::kNone;
  double log_floor = 1e-6;       // kNaturalLog only
  std::optional<double> top_db;  // kDecibels only
};

class Spectrogram {
 public:
  // InvalidArgument naming the field unless sample_rate >= 1, n_fft >= 2,
  // 1 <= win_length <= n_fft, hop_length >= 1 (also when defaulted), power
  // is 1 or 2, log_floor > 0, top_db >= 0 and set only with kDecibels, and
  // the mel config is valid (MelFilterbank::Create).
  static absl::StatusOr<Spectrogram> Create(const SpectrogramConfig& config);

  Spectrogram(Spectrogram&&) noexcept = default;
  Spectrogram& operator=(Spectrogram&&) noexcept = default;

  // Output rows: mel bands, or n_fft / 2 + 1 frequency bins.
  int rows() const;
  int win_length() const { return win_length_; }
  int hop_length() const { return hop_length_; }

  // Frames of a waveform of `length` samples: 1 + (length + 2 * (n_fft / 2)
  // - n_fft) / hop_length with center (1 + length / hop_length for even
  // n_fft), 1 + (length - n_fft) / hop_length without; 0 when the waveform
  // is too short (center: length <= n_fft / 2, the reflect padding needs
  // more; else length < n_fft), which Compute rejects.
  size_t NumFrames(size_t length) const;
  // rows() * NumFrames(length): the floats Compute writes.
  size_t OutputSize(size_t length) const;

  // Writes the spectrogram of `waveform` to `out`, (rows(), frames)
  // row-major. InvalidArgument when NumFrames(waveform.size()) is 0 or
  // out.size() != OutputSize(waveform.size()). Allocates nothing.
  absl::Status Compute(std::span<const float> waveform, std::span<float> out);

 private:
  Spectrogram(const SpectrogramConfig& config, int win_length, int hop_length,
              RealFft fft, std::optional<MelFilterbank> mel);

  // Fills the FFT input with windowed frame `frame` of `waveform`.
  void LoadFrame(std::span<const float> waveform, size_t frame);
  // Applies config_.log to the whole output.
  void ApplyLog(std::span<float> out) const;

  SpectrogramConfig config_;
  int win_length_;
  int hop_length_;
  RealFft fft_;
  std::optional<MelFilterbank> mel_;
  std::vector<float> window_;  // win_length_ periodic Hann values
  std::vector<float> bins_;    // |X[k]|^power of one frame
  std::vector<float> bands_;   // mel energies of one frame
};

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_DSP_SPECTROGRAM_H_
