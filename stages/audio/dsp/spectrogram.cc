#include "stages/audio/dsp/spectrogram.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::audio {
namespace {

absl::Status FieldError(const char* field, const std::string& requirement) {
  return absl::InvalidArgumentError(
      absl::StrCat("spectrogram: ", field, " ", requirement));
}

// The STFT fields and the log; the mel fields are MelFilterbank's.
absl::Status Validate(const SpectrogramConfig& config, int win_length,
                      int hop_length) {
  if (config.sample_rate < 1) {
    return FieldError("sample_rate",
                      absl::StrCat("must be >= 1, got ", config.sample_rate));
  }
  if (config.n_fft < 2) {
    return FieldError("n_fft",
                      absl::StrCat("must be >= 2, got ", config.n_fft));
  }
  if (win_length < 1 || win_length > config.n_fft) {
    return FieldError("win_length",
                      absl::StrCat("must be in [1, n_fft = ", config.n_fft,
                                   "], got ", win_length));
  }
  if (hop_length < 1) {
    return FieldError(
        "hop_length",
        absl::StrCat("must be >= 1, got ", hop_length,
                     config.hop_length ? "" : " (default win_length / 2)"));
  }
  if (config.power != 1.0 && config.power != 2.0) {
    return FieldError("power",
                      absl::StrCat("must be 1 or 2, got ", config.power));
  }
  if (!(config.log_floor > 0.0)) {
    return FieldError("log_floor",
                      absl::StrCat("must be > 0, got ", config.log_floor));
  }
  if (config.top_db.has_value()) {
    if (config.log != LogScale::kDecibels) {
      return FieldError("top_db", "is only meaningful with the decibel log");
    }
    if (!(*config.top_db >= 0.0)) {
      return FieldError("top_db",
                        absl::StrCat("must be >= 0, got ", *config.top_db));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Spectrogram> Spectrogram::Create(
    const SpectrogramConfig& config) {
  const int win_length = config.win_length.value_or(config.n_fft);
  const int hop_length = config.hop_length.value_or(win_length / 2);
  if (absl::Status status = Validate(config, win_length, hop_length);
      !status.ok()) {
    return status;
  }
  std::optional<MelFilterbank> mel;
  if (config.mel.has_value()) {
    absl::StatusOr<MelFilterbank> filterbank = MelFilterbank::Create(
        *config.mel, config.sample_rate, config.n_fft / 2 + 1);
    if (!filterbank.ok()) return filterbank.status();
    mel = *std::move(filterbank);
  }
  absl::StatusOr<RealFft> fft = RealFft::Create(config.n_fft);
  if (!fft.ok()) return fft.status();
  return Spectrogram(config, win_length, hop_length, *std::move(fft),
                     std::move(mel));
}

Spectrogram::Spectrogram(const SpectrogramConfig& config, int win_length,
                         int hop_length, RealFft fft,
                         std::optional<MelFilterbank> mel)
    : config_(config),
      win_length_(win_length),
      hop_length_(hop_length),
      fft_(std::move(fft)),
      mel_(std::move(mel)),
      window_(win_length),
      bins_(config.n_fft / 2 + 1),
      bands_(mel_ ? mel_->n_mels() : 0) {
  // torch.hann_window(win_length, periodic=True).
  for (int i = 0; i < win_length; ++i) {
    window_[i] = static_cast<float>(
        0.5 - 0.5 * std::cos(2 * std::numbers::pi * i / win_length));
  }
  // The zeros around the window stay: LoadFrame writes only its span.
  std::ranges::fill(fft_.input(), 0.0f);
}

int Spectrogram::rows() const {
  return mel_ ? mel_->n_mels() : config_.n_fft / 2 + 1;
}

size_t Spectrogram::NumFrames(size_t length) const {
  const size_t n_fft = config_.n_fft;
  const size_t pad = config_.center ? n_fft / 2 : 0;
  if (config_.center ? length <= pad : length < n_fft) return 0;
  return 1 + (length + 2 * pad - n_fft) / hop_length_;
}

size_t Spectrogram::OutputSize(size_t length) const {
  return static_cast<size_t>(rows()) * NumFrames(length);
}

void Spectrogram::LoadFrame(std::span<const float> waveform, size_t frame) {
  const int64_t length = static_cast<int64_t>(waveform.size());
  const int64_t window_offset = (config_.n_fft - win_length_) / 2;
  const int64_t pad = config_.center ? config_.n_fft / 2 : 0;
  // Waveform index of the first windowed sample.
  const int64_t start =
      static_cast<int64_t>(frame) * hop_length_ - pad + window_offset;
  float* in = fft_.input().data() + window_offset;
  if (start >= 0 && start + win_length_ <= length) {
    const float* samples = waveform.data() + start;
    for (int i = 0; i < win_length_; ++i) in[i] = samples[i] * window_[i];
    return;
  }
  // Near an edge of a centred STFT: reflect (the edge sample not repeated).
  for (int i = 0; i < win_length_; ++i) {
    int64_t j = start + i;
    if (j < 0) j = -j;
    if (j >= length) j = 2 * (length - 1) - j;
    in[i] = waveform[j] * window_[i];
  }
}

absl::Status Spectrogram::Compute(std::span<const float> waveform,
                                  std::span<float> out) {
  const size_t frames = NumFrames(waveform.size());
  if (frames == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spectrogram: a waveform of ", waveform.size(),
        " samples is too short for n_fft ", config_.n_fft,
        config_.center ? " (center needs more than n_fft / 2)"
                       : " (needs at least n_fft without center)"));
  }
  if (out.size() != OutputSize(waveform.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("spectrogram: output has ", out.size(),
                     " floats, expected ", OutputSize(waveform.size()), " (",
                     rows(), " rows x ", frames, " frames)"));
  }
  const bool magnitude = config_.power == 1.0;
  for (size_t t = 0; t < frames; ++t) {
    LoadFrame(waveform, t);
    std::span<const std::complex<float>> spectrum = fft_.Forward();
    for (size_t k = 0; k < bins_.size(); ++k) {
      const float re = spectrum[k].real();
      const float im = spectrum[k].imag();
      const float squared = re * re + im * im;
      bins_[k] = magnitude ? std::sqrt(squared) : squared;
    }
    std::span<const float> column = bins_;
    if (mel_) {
      mel_->Apply(bins_, bands_);
      column = bands_;
    }
    for (size_t r = 0; r < column.size(); ++r) out[r * frames + t] = column[r];
  }
  ApplyLog(out);
  return absl::OkStatus();
}

void Spectrogram::ApplyLog(std::span<float> out) const {
  switch (config_.log) {
    case LogScale::kNone:
      return;
    case LogScale::kNaturalLog: {
      const float floor = static_cast<float>(config_.log_floor);
      for (float& x : out) x = std::log(std::max(x, floor));
      return;
    }
    case LogScale::kDecibels: {
      constexpr float kAmin = 1e-10f;
      const float multiplier = config_.power == 2.0 ? 10.0f : 20.0f;
      for (float& x : out) x = multiplier * std::log10(std::max(x, kAmin));
      if (config_.top_db.has_value()) {
        const float floor = *std::ranges::max_element(out) -
                            static_cast<float>(*config_.top_db);
        for (float& x : out) x = std::max(x, floor);
      }
      return;
    }
  }
}

}  // namespace sluice::audio
