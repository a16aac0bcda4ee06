// Clips per second of Spectrogram::Compute (stages/audio/dsp/), single core,
// for two common settings: n_fft 400 / hop 160 / 64 mels on 1 s at 16 kHz,
// and n_fft 1024 / hop 320 / 128 mels on 1 s at 32 kHz (log-mel in dB, as a
// training pipeline would use them). Also times the FFTs alone (one
// RealFft::Forward per frame) and derives the FFT-free bound: the clips/s
// if the FFT cost nothing, i.e. what the window, |X|^2, filterbank and log
// cost. Prints a table, then one JSON line.
//
//   spectrogram_benchmark
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "stages/audio/dsp/real_fft.h"
#include "stages/audio/dsp/spectrogram.h"

namespace {

using namespace sluice::audio;  // NOLINT(build/namespaces): a small program

struct Setting {
  const char* name;
  int sample_rate;
  int n_fft;
  int hop_length;
  int n_mels;
};

// Runs `step` until a second has passed; returns calls per second.
template <typename Step>
double PerSecond(Step step) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  size_t calls = 0;
  double seconds = 0;
  do {
    for (int i = 0; i < 16; ++i) step();
    calls += 16;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } while (seconds < 1.0);
  return calls / seconds;
}

}  // namespace

int main() {
  constexpr Setting kSettings[] = {
      {"400/160/64mel@16k", 16000, 400, 160, 64},
      {"1024/320/128mel@32k", 32000, 1024, 320, 128}};
  std::printf("FFT: FFTW3 single precision, FFTW_ESTIMATE\n");
  std::printf("%-20s %12s %12s %16s\n", "setting", "clips/s", "FFT clips/s",
              "FFT-free bound");
  std::string json = "{\"benchmark\":\"spectrogram\",\"fft\":\"fftw3f\"";
  for (const Setting& setting : kSettings) {
    absl::StatusOr<Spectrogram> spectrogram =
        Spectrogram::Create({.sample_rate = setting.sample_rate,
                             .n_fft = setting.n_fft,
                             .hop_length = setting.hop_length,
                             .mel = MelConfig{.n_mels = setting.n_mels},
                             .log = LogScale::kDecibels,
                             .top_db = 80.0});
    absl::StatusOr<RealFft> fft = RealFft::Create(setting.n_fft);
    if (!spectrogram.ok() || !fft.ok()) {
      std::fprintf(stderr, "cannot create the spectrogram\n");
      return 1;
    }
    // One second: a 440 Hz tone plus a little deterministic "noise".
    std::vector<float> waveform(setting.sample_rate);
    for (size_t i = 0; i < waveform.size(); ++i) {
      waveform[i] = std::sin(2 * 3.14159265 * 440 * i / setting.sample_rate) +
                    0.01f * static_cast<float>((i * 7919) % 101) / 101;
    }
    std::vector<float> out(spectrogram->OutputSize(waveform.size()));
    const size_t frames = spectrogram->NumFrames(waveform.size());
    const double clips = PerSecond([&] {
      if (!spectrogram->Compute(waveform, out).ok()) std::abort();
    });
    const double fft_clips = PerSecond([&] {
      for (size_t t = 0; t < frames; ++t) fft->Forward();
    });
    const double bound = 1.0 / (1.0 / clips - 1.0 / fft_clips);
    std::printf("%-20s %12.0f %12.0f %16.0f\n", setting.name, clips, fft_clips,
                bound);
    const std::string key =
        std::string(",\"n_fft") + std::to_string(setting.n_fft);
    json += key + "_clips_per_s\":" + std::to_string(clips) + key +
            "_fft_clips_per_s\":" + std::to_string(fft_clips) + key +
            "_fft_free_bound\":" + std::to_string(bound);
  }
  std::printf("%s}\n", json.c_str());
  return 0;
}
