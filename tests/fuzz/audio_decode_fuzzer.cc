// Fuzzes audio clip decoding (stages/audio/codec/audio_decoding.h) under a
// 60 s limit: hostile bytes must give OK or a refusal with a reason, never a
// crash, a read outside the input or a result that breaks the limits; the
// decoded waveform is then resampled to 16 kHz.
#include <cstddef>
#include <cstdint>
#include <span>

#include "stages/audio/codec/audio_decoding.h"
#include "stages/audio/codec/resampler.h"

// libsndfile 1.2.0 leaks libvorbis's vorbis_info (5.8 KB) when it fails to
// open a damaged Ogg Vorbis stream; see stages/audio/codec/README.md.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:vorbis_info_init\n";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice::audio;
  constexpr DecodeLimits kLimits{.max_seconds = 60, .max_channels = 32};
  static DecodedAudio decoded;  // reused, as the stage does
  const absl::Status status =
      DecodeAudioInto(std::as_bytes(std::span(data, size)), kLimits, decoded);
  if (!status.ok()) {
    if (!AudioSkipReasonOf(status) || !decoded.samples.empty()) {
      __builtin_trap();
    }
    return 0;
  }
  if (decoded.samples.empty() || decoded.sample_rate <= 0 ||
      decoded.source_channels < 1 || decoded.source_channels > 32 ||
      decoded.samples.size() >
          static_cast<size_t>(60.0 * decoded.sample_rate)) {
    __builtin_trap();
  }
  // Quick quality keeps the fuzzer fast; the other recipes share the code.
  static Resampler resampler(ResampleQuality::kQuick);
  static std::vector<float> resampled;
  if (decoded.samples.size() <= 16000 * 10 &&
      resampler.Resample(decoded.samples, decoded.sample_rate, 16000, resampled)
          .ok() &&
      resampled.size() !=
          ResampledFrames(decoded.samples.size(), decoded.sample_rate, 16000)) {
    __builtin_trap();
  }
  return 0;
}
