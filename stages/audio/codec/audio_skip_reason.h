// Why an audio clip is refused, as a stable snake_case name the decoder
// stage counts skips by, carried inside an absl::Status.
//
//   absl::Status status = DecodeAudioInto(bytes, limits, decoded);
//   if (!status.ok()) {
//     std::optional<AudioSkipReason> reason = AudioSkipReasonOf(status);
//     CountSkipped(reason ? AudioSkipReasonName(*reason) : "error");
//     Log(status.message());  // "truncated: FLAC stream ... (lost sync)"
//   }
//
// A refusal is an absl::Status with code kInvalidArgument, a message that
// starts with the reason's name, and the reason attached as a payload (so
// it survives being passed through code that only forwards statuses).
#ifndef SLUICE_STAGES_AUDIO_CODEC_AUDIO_SKIP_REASON_H_
#define SLUICE_STAGES_AUDIO_CODEC_AUDIO_SKIP_REASON_H_

#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace sluice::audio {

// Why a clip is refused (DecodeAudioInto() gives the order of the checks).
enum class AudioSkipReason {
  kEmptyClip,            // zero bytes, or a valid header and zero frames
  kNotAudio,             // no WAV, FLAC, Ogg or MP3 signature
  kMalformed,            // a signature, but libsndfile cannot open it or its
                         // header has impossible values
  kUnsupportedEncoding,  // a known container holding another encoding
                         // (e.g. ADPCM WAV, AIFF after an ID3 tag)
  kTooManyChannels,      // more channels than DecodeLimits::max_channels
  kTooLong,              // longer than DecodeLimits::max_seconds
  kLengthMismatch,       // a WAV header claims more sample data than it holds
  kTruncated,  // a FLAC/Ogg/MP3 stream ends early: a decoder error mid-stream
               // or fewer frames than its header promises
};

// The stable snake_case name of `reason`, e.g. "length_mismatch".
std::string_view AudioSkipReasonName(AudioSkipReason reason);

// A kInvalidArgument status "<name>: <message>" carrying `reason`.
absl::Status AudioSkipStatus(AudioSkipReason reason, std::string_view message);

// The reason carried by a status made by AudioSkipStatus(); nullopt for OK
// and for any other status.
std::optional<AudioSkipReason> AudioSkipReasonOf(const absl::Status& status);

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_CODEC_AUDIO_SKIP_REASON_H_
