// The audio benchmark's ceiling (audio_bench_ceiling.h).
#include "bench/audio_bench_ceiling.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "stages/audio/codec/audio_decoding.h"
#include "stages/audio/codec/resampler.h"
#include "stages/audio/dsp/crop_or_pad.h"
#include "stages/audio/dsp/spectrogram.h"

namespace sluice::audio_bench {

CeilingPass CeilingOnce(const Clips& clips) {
  audio::DecodedAudio decoded;
  audio::Resampler resampler(audio::ResampleQuality::kHigh);
  std::vector<float> resampled;
  std::vector<float> clip(kClipSamples);
  absl::StatusOr<audio::Spectrogram> spectrogram =
      audio::Spectrogram::Create({.sample_rate = kSampleRate,
                                  .n_fft = 400,
                                  .hop_length = 160,
                                  .mel = audio::MelConfig{.n_mels = 64},
                                  .log = audio::LogScale::kNaturalLog});
  if (!spectrogram.ok()) Die(spectrogram.status().ToString());
  std::vector<float> out(spectrogram->OutputSize(kClipSamples));
  CeilingPass pass;
  float sink = 0;
  const auto start = Clock::now();
  for (size_t i = 0; i < clips.bytes.size(); ++i) {
    if (!audio::DecodeAudioInto(clips.bytes[i], {.max_seconds = 60}, decoded)
             .ok()) {
      Die(absl::StrCat("clip ", i, " does not decode"));
    }
    pass.audio_seconds +=
        static_cast<double>(decoded.samples.size()) / decoded.sample_rate;
    if (!resampler
             .Resample(decoded.samples, decoded.sample_rate, kSampleRate,
                       resampled)
             .ok()) {
      Die("resampling failed");
    }
    audio::CropOrPad(resampled, 0, static_cast<int64_t>(i),
                     audio::CropMode::kEval, clip);
    if (!spectrogram->Compute(clip, out).ok()) Die("spectrogram failed");
    sink += out[i % out.size()];
  }
  pass.seconds = Seconds(Clock::now() - start);
  if (sink == 1.2345f) std::printf(" ");  // keep the work observable
  return pass;
}

double ParallelCeiling(const Clips& clips, int threads) {
  std::vector<CeilingPass> each(threads);
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] { each[t] = CeilingOnce(clips); });
    }
  }
  double slowest = 0;
  for (const CeilingPass& pass : each)
    slowest = std::max(slowest, pass.seconds);
  return static_cast<double>(threads * clips.bytes.size()) / slowest;
}

}  // namespace sluice::audio_bench
