// Audio clips for the codec tests, encoded in memory by libsndfile's own
// writer (virtual I/O), and small signal helpers.
//
//   std::vector<std::byte> wav = EncodeClip(Sine(16000, 16000, 440, 0.5),
//       1, 16000, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
#ifndef SLUICE_TESTS_STAGES_AUDIO_CODEC_TEST_CLIPS_H_
#define SLUICE_TESTS_STAGES_AUDIO_CODEC_TEST_CLIPS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sluice::audio::testing {

// `frames` samples of amplitude * sin(2 pi frequency t) at `sample_rate`.
std::vector<float> Sine(size_t frames, int sample_rate, double frequency,
                        double amplitude);

// Interleaved float frames encoded as `format` (SF_FORMAT_* major | sub).
// Empty when libsndfile cannot write that format.
std::vector<std::byte> EncodeClip(std::span<const float> interleaved,
                                  int channels, int sample_rate, int format);

// The same from interleaved int32 samples (sf_writef_int: a B-bit format
// keeps the top B bits), for clips whose decoded floats are known exactly.
std::vector<std::byte> EncodeIntClip(std::span<const int32_t> interleaved,
                                     int channels, int sample_rate, int format);

// `count` pseudo-random samples that a `bits`-bit PCM format stores exactly,
// as int32 (top `bits` bits used) and as the floats sf_readf_float gives.
struct ExactSamples {
  std::vector<int32_t> ints;
  std::vector<float> floats;
};
ExactSamples RandomExactSamples(size_t count, int bits, uint32_t seed);

}  // namespace sluice::audio::testing

#endif  // SLUICE_TESTS_STAGES_AUDIO_CODEC_TEST_CLIPS_H_
