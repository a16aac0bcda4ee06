// Encoded audio clip bytes (WAV, FLAC, Ogg Vorbis/Opus, MP3) to a mono float
// waveform at the clip's own sample rate, decoded from memory by libsndfile.
//
//   DecodedAudio decoded;  // reused across clips: its buffer is kept
//   absl::Status status = DecodeAudioInto(bytes, {.max_seconds = 30}, decoded);
//   if (!status.ok()) ...count AudioSkipReasonOf(status), skip the clip
//   resampler.Resample(decoded.samples, decoded.sample_rate, 16000, out);
//
// Samples are what sf_readf_float gives (python-soundfile's
// `read(dtype='float32')`): integer PCM scaled by 1/2^(bits-1) (16-bit:
// x / 32768), float WAV as stored. Several channels are mixed to their mean,
// summed in channel order in float then divided by the channel count (what
// numpy's `mean(axis=1)` gives for stereo, to the last bit).
//
// Hostile bytes never make the decoder crash or read outside `bytes`: a
// clip is refused with a reason (audio_skip_reason.h). Only the containers
// and encodings below are handed to libsndfile's decoders; any other bytes
// are refused before libsndfile parses more than their header.
//   WAV (RIFF, RIFX, RF64, WAVE_FORMAT_EXTENSIBLE): 8/16/24/32-bit PCM,
//       32/64-bit float, u-law, A-law
//   FLAC: 8/16/24-bit    Ogg: Vorbis, Opus    MPEG: layers I, II, III
//
// Thread-safe: no shared state; call from any number of threads at once.
// libsndfile's bundled mpg123 may print warnings about odd MP3 streams to
// stderr; they do not change the result.
#ifndef SLUICE_STAGES_AUDIO_CODEC_AUDIO_DECODING_H_
#define SLUICE_STAGES_AUDIO_CODEC_AUDIO_DECODING_H_

#include <cstddef>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "stages/audio/codec/audio_skip_reason.h"

namespace sluice::audio {

// What a clip may be and still be decoded.
struct DecodeLimits {
  // A clip longer than this many seconds is refused as too_long; one of
  // exactly max_seconds (frames <= floor(max_seconds * rate)) passes. 0 or
  // less: no limit (then a small FLAC of silence may decode to gigabytes).
  double max_seconds = 0;
  // More channels than this are refused as too_many_channels. libsndfile
  // itself opens at most 1024.
  int max_channels = 32;
};

// A decoded clip.
struct DecodedAudio {
  int sample_rate = 0;         // the clip's own rate, Hz
  int source_channels = 0;     // channels before the mono mixdown
  std::vector<float> samples;  // mono, one per frame
};

// Decodes `bytes` into `out`, reusing the capacity of `out.samples`.
// Returns OK, or a refusal made by AudioSkipStatus(); `out` is then reset
// (rate 0, no samples, capacity kept). The checks run in this order:
//   empty_clip (0 bytes), not_audio, malformed (libsndfile cannot open it,
//   or rate/channels/frames out of range), unsupported_encoding,
//   too_many_channels, truncated (an Ogg stream whose end cannot be found),
//   too_long (from the header, before decoding), length_mismatch (a WAV
//   data chunk larger than the clip), then after decoding: truncated (a
//   decoder error), too_long (frames counted while decoding, which stops
//   one frame past the limit: the header may lie), empty_clip (0 frames),
//   and length_mismatch (WAV) / truncated (FLAC, Ogg, MP3) when fewer
//   frames came out than the header announced. More frames than announced
//   are kept.
absl::Status DecodeAudioInto(std::span<const std::byte> bytes,
                             const DecodeLimits& limits, DecodedAudio& out);

// The same, into a new DecodedAudio.
absl::StatusOr<DecodedAudio> DecodeAudio(std::span<const std::byte> bytes,
                                         const DecodeLimits& limits);

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_CODEC_AUDIO_DECODING_H_
