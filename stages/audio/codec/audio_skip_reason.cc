#include "stages/audio/codec/audio_skip_reason.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace sluice::audio {
namespace {

// Debian's abseil has its own string_view: pass C strings to Status.
constexpr char kPayloadUrl[] = "type.sluice/audio_skip_reason";

constexpr AudioSkipReason kAllReasons[] = {
    AudioSkipReason::kEmptyClip,       AudioSkipReason::kNotAudio,
    AudioSkipReason::kMalformed,       AudioSkipReason::kUnsupportedEncoding,
    AudioSkipReason::kTooManyChannels, AudioSkipReason::kTooLong,
    AudioSkipReason::kLengthMismatch,  AudioSkipReason::kTruncated,
};

}  // namespace

std::string_view AudioSkipReasonName(AudioSkipReason reason) {
  switch (reason) {
    case AudioSkipReason::kEmptyClip:
      return "empty_clip";
    case AudioSkipReason::kNotAudio:
      return "not_audio";
    case AudioSkipReason::kMalformed:
      return "malformed";
    case AudioSkipReason::kUnsupportedEncoding:
      return "unsupported_encoding";
    case AudioSkipReason::kTooManyChannels:
      return "too_many_channels";
    case AudioSkipReason::kTooLong:
      return "too_long";
    case AudioSkipReason::kLengthMismatch:
      return "length_mismatch";
    case AudioSkipReason::kTruncated:
      return "truncated";
  }
  return "unknown";
}

absl::Status AudioSkipStatus(AudioSkipReason reason, std::string_view message) {
  const std::string name(AudioSkipReasonName(reason));
  absl::Status status = absl::InvalidArgumentError(
      absl::StrCat(name, ": ", std::string(message)));
  status.SetPayload(kPayloadUrl, absl::Cord(name));
  return status;
}

std::optional<AudioSkipReason> AudioSkipReasonOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kPayloadUrl);  // absl::optional
  if (!payload) return std::nullopt;
  const std::string name(*payload);
  for (AudioSkipReason reason : kAllReasons) {
    if (name == AudioSkipReasonName(reason)) return reason;
  }
  return std::nullopt;
}

}  // namespace sluice::audio
