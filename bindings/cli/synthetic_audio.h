// Synthetic labelled audio clips: one recognisable sound per class (a tone,
// a chirp, a noise band or a click train), rendered from a seed and encoded
// in memory with libsndfile as WAV 16-bit PCM, WAV float, FLAC or Ogg
// Vorbis; and damaged clips for exercising decoders' error paths. The data
// behind `sluice gen audio` (audio_data.h), reusable by benchmarks.
//
//   const ClipSpec spec = DrawClipSpec(/*seed=*/1, /*index=*/42,
//                                      /*classes=*/8);
//   const std::vector<float> samples = SynthesizeClip(spec);
//   absl::StatusOr<std::vector<std::byte>> encoded =
//       EncodeClip(spec, samples);
//
// Promises: everything is a pure function of its arguments, so the same
// seed gives the same samples and the same bytes on a given build
// (libsndfile's time-stamped WAV PEAK chunk is left out, and the random
// serial number it gives each Ogg stream is replaced by one drawn from the
// spec, page checksums recomputed).
#ifndef SLUICE_BINDINGS_CLI_SYNTHETIC_AUDIO_H_
#define SLUICE_BINDINGS_CLI_SYNTHETIC_AUDIO_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::cli {

// The sound of a class: class k is kind k % 4.
enum class SoundKind { kTone, kChirp, kNoiseBand, kClickTrain };
inline constexpr int kSoundKinds = 4;

// "tone", "chirp", "noise-band" or "click-train".
std::string_view SoundKindName(SoundKind kind);

// What class `label` sounds like. The parameters depend on the label alone
// (q = label / 4 numbers the classes of one kind); every frequency stays
// under 3.6 kHz, below the Nyquist frequency of 8 kHz audio, for labels
// under 1000 (the synthesis clamps higher ones).
struct ClassSound {
  SoundKind kind = SoundKind::kTone;
  // kTone: the fundamental (low_hz == high_hz), with its second harmonic at
  // a third of the amplitude. kChirp: an exponential sweep over the clip
  // between low_hz and high_hz = 4 low_hz, up for even q, down (`falling`)
  // for odd q.
  // kNoiseBand: white noise band-passed to [low_hz, high_hz] (a quarter of
  // the centre frequency wide). kClickTrain: decaying 1.5 kHz clicks,
  // rate_hz per second.
  double low_hz = 0;
  double high_hz = 0;
  double rate_hz = 0;    // kClickTrain only
  bool falling = false;  // kChirp only
};
ClassSound SoundOfClass(int64_t label);

enum class AudioEncoding { kWavPcm16, kWavFloat, kFlac, kOggVorbis };
inline constexpr int kAudioEncodings = 4;

// "wav-pcm16", "wav-float", "flac" or "ogg-vorbis".
std::string_view AudioEncodingName(AudioEncoding encoding);
// The file extension without the dot: "wav", "flac" or "ogg".
std::string_view AudioEncodingExtension(AudioEncoding encoding);

// The sample rates clips are drawn from.
inline constexpr std::array<int, 5> kClipSampleRates = {8000, 16000, 22050,
                                                        44100, 48000};
// Every clip lasts between these (frames / sample_rate).
inline constexpr double kMinClipSeconds = 0.5;
inline constexpr double kMaxClipSeconds = 3.0;

// One clip to render and encode.
struct ClipSpec {
  int64_t label = 0;
  int sample_rate = 16000;
  int channels = 1;    // 1 or 2
  int64_t frames = 0;  // samples per channel
  AudioEncoding encoding = AudioEncoding::kWavPcm16;
  float amplitude = 0.5f;    // peak of the louder channel, in [0.25, 0.8]
  float right_gain = 1.0f;   // the right channel is the left times this
  uint64_t random_seed = 0;  // phases, noise and the Ogg serial number

  double seconds() const { return static_cast<double>(frames) / sample_rate; }
};

// The clip of row `index` of a data set: label uniform in [0, classes)
// (classes >= 1), sample rate, encoding and channels uniform over their
// choices, duration uniform in [kMinClipSeconds, kMaxClipSeconds]. Depends
// on (seed, index, classes) alone.
ClipSpec DrawClipSpec(uint64_t seed, int64_t index, int64_t classes);

// The clip's samples, interleaved (frames * channels), the class's sound
// scaled to `amplitude` with 5 ms fades at both ends.
std::vector<float> SynthesizeClip(const ClipSpec& spec);

// Encodes `samples` (interleaved, spec.channels per frame) as
// spec.encoding. An Internal error carrying libsndfile's message if it
// refuses.
absl::StatusOr<std::vector<std::byte>> EncodeClip(
    const ClipSpec& spec, std::span<const float> samples);

// The ways a clip can be damaged.
enum class CorruptKind {
  // 64 to 4095 random bytes: no decoder recognises the format.
  kRandomBytes,
  // The clip's FLAC encoding cut to half its bytes: libsndfile opens it
  // and fails part way ("flac decoder lost sync").
  kTruncatedFlac,
  // Zero bytes.
  kEmpty,
  // A 16-bit WAV whose RIFF and data chunk sizes promise every frame but
  // that holds only the first half. Note: libsndfile opens it without an
  // error and reports (and reads) only the frames present; only a decoder
  // that compares the data chunk size with the file notices.
  kWavFrameCountLie,
};
inline constexpr int kCorruptKinds = 4;

// "random-bytes", "truncated-flac", "empty" or "wav-frame-count-lie".
std::string_view CorruptKindName(CorruptKind kind);

// The encoding a damaged clip claims (its file extension): FLAC for
// kTruncatedFlac, 16-bit WAV for kWavFrameCountLie, spec.encoding
// otherwise.
AudioEncoding ClaimedEncoding(CorruptKind kind, const ClipSpec& spec);

// A damaged clip of `kind` made from `spec` (deterministic, as above).
absl::StatusOr<std::vector<std::byte>> MakeCorruptClip(CorruptKind kind,
                                                       const ClipSpec& spec);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_SYNTHETIC_AUDIO_H_
