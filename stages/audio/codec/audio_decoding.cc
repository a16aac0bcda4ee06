#include "stages/audio/codec/audio_decoding.h"

#include <sndfile.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "stages/audio/codec/internal/container_sniffing.h"
#include "stages/audio/codec/internal/memory_sound_file.h"

namespace sluice::audio {
namespace {

using internal::Container;

constexpr int kLibsndfileMaxChannels = 1024;
// Interleaved floats decoded per call when mixing down or reading past the
// header's frame count (32 KiB on the stack; >= 8 frames at 1024 channels).
constexpr size_t kBlockFloats = 8192;
// Never trust a header for more than this up-front allocation (64 MiB).
constexpr sf_count_t kMaxReserveFrames = sf_count_t{1} << 24;
constexpr sf_count_t kNoFrameLimit = std::numeric_limits<sf_count_t>::max() - 1;

bool IsWav(int major) {
  return major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX ||
         major == SF_FORMAT_RF64;
}

bool IsAcceptedEncoding(int format) {
  const int major = format & SF_FORMAT_TYPEMASK;
  const int sub = format & SF_FORMAT_SUBMASK;
  if (IsWav(major)) {
    switch (sub) {
      case SF_FORMAT_PCM_U8:
      case SF_FORMAT_PCM_S8:
      case SF_FORMAT_PCM_16:
      case SF_FORMAT_PCM_24:
      case SF_FORMAT_PCM_32:
      case SF_FORMAT_FLOAT:
      case SF_FORMAT_DOUBLE:
      case SF_FORMAT_ULAW:
      case SF_FORMAT_ALAW:
        return true;
      default:
        return false;
    }
  }
  switch (major) {
    case SF_FORMAT_FLAC:
      return sub == SF_FORMAT_PCM_S8 || sub == SF_FORMAT_PCM_16 ||
             sub == SF_FORMAT_PCM_24;
    case SF_FORMAT_OGG:
      return sub == SF_FORMAT_VORBIS || sub == SF_FORMAT_OPUS;
    case SF_FORMAT_MPEG:
      return sub == SF_FORMAT_MPEG_LAYER_I || sub == SF_FORMAT_MPEG_LAYER_II ||
             sub == SF_FORMAT_MPEG_LAYER_III;
    default:
      return false;
  }
}

std::string_view ContainerName(Container container) {
  switch (container) {
    case Container::kWav:
      return "WAV";
    case Container::kFlac:
      return "FLAC";
    case Container::kOgg:
      return "Ogg";
    case Container::kMpeg:
      return "MPEG audio";
    case Container::kUnknown:
      break;
  }
  return "unknown";
}

// The first bytes, printable ones as is, others as \xNN: enough to tell
// an HTML error page or a zip from audio in a log line.
std::string Preview(std::span<const std::byte> bytes) {
  std::string preview;
  for (std::byte b : bytes.first(std::min<size_t>(bytes.size(), 8))) {
    const auto c = static_cast<unsigned char>(b);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      preview.push_back(static_cast<char>(c));
    } else {
      preview += absl::StrFormat("\\x%02x", c);
    }
  }
  return preview;
}

// The most frames a clip may have at `sample_rate`.
sf_count_t MaxFrames(const DecodeLimits& limits, int sample_rate) {
  if (!(limits.max_seconds > 0)) return kNoFrameLimit;
  const double frames = std::floor(limits.max_seconds * sample_rate);
  if (!(frames < static_cast<double>(kNoFrameLimit))) return kNoFrameLimit;
  return static_cast<sf_count_t>(frames);
}

double Seconds(sf_count_t frames, int sample_rate) {
  return static_cast<double>(frames) / sample_rate;
}

// Reads up to `frames` mono frames into `destination`; fewer at the end of
// the stream or on a decoder error.
sf_count_t ReadMono(SNDFILE* file, float* destination, sf_count_t frames) {
  sf_count_t total = 0;
  while (total < frames) {
    const sf_count_t got =
        sf_readf_float(file, destination + total, frames - total);
    if (got <= 0) break;
    total += std::min(got, frames - total);
  }
  return total;
}

// Reads and mixes down frames through a stack block, appending to
// `samples`, until the stream ends or `samples` holds `limit` frames.
void ReadMixedDown(SNDFILE* file, int channels, sf_count_t limit,
                   std::vector<float>& samples) {
  std::array<float, kBlockFloats> block;
  const sf_count_t block_frames = kBlockFloats / channels;
  const float divisor = static_cast<float>(channels);
  while (static_cast<sf_count_t>(samples.size()) < limit) {
    const sf_count_t want =
        std::min(block_frames, limit - static_cast<sf_count_t>(samples.size()));
    sf_count_t got = sf_readf_float(file, block.data(), want);
    if (got <= 0) break;
    got = std::min(got, want);
    const size_t start = samples.size();
    samples.resize(start + static_cast<size_t>(got));
    const float* frame = block.data();
    for (sf_count_t i = 0; i < got; ++i, frame += channels) {
      float sum = frame[0];
      for (int c = 1; c < channels; ++c) sum += frame[c];
      samples[start + static_cast<size_t>(i)] = sum / divisor;
    }
  }
}

absl::Status Decode(std::span<const std::byte> bytes,
                    const DecodeLimits& limits, DecodedAudio& out) {
  if (bytes.empty()) {
    return AudioSkipStatus(AudioSkipReason::kEmptyClip, "the clip has 0 bytes");
  }
  const Container container = internal::SniffContainer(bytes);
  if (container == Container::kUnknown) {
    return AudioSkipStatus(
        AudioSkipReason::kNotAudio,
        absl::StrCat(bytes.size(), " bytes starting \"", Preview(bytes),
                     "\" are not WAV, FLAC, Ogg or MPEG audio"));
  }
  const std::string kind(ContainerName(container));
  internal::MemorySoundFile file(bytes);
  if (file.get() == nullptr) {
    return AudioSkipStatus(
        AudioSkipReason::kMalformed,
        absl::StrCat("libsndfile cannot open this ", kind, " clip (",
                     bytes.size(), " bytes): corrupt or truncated header"));
  }
  const SF_INFO& info = file.info();
  const int major = info.format & SF_FORMAT_TYPEMASK;
  if (info.channels <= 0 || info.samplerate <= 0 || info.frames < 0) {
    return AudioSkipStatus(
        AudioSkipReason::kMalformed,
        absl::StrCat(kind, " header gives ", info.channels, " channels at ",
                     info.samplerate, " Hz, ", info.frames, " frames"));
  }
  if (!IsAcceptedEncoding(info.format)) {
    return AudioSkipStatus(
        AudioSkipReason::kUnsupportedEncoding,
        absl::StrFormat("libsndfile format 0x%06x in a %s clip is not one "
                        "of the decoded encodings",
                        info.format, kind));
  }
  const int max_channels =
      std::min(limits.max_channels, kLibsndfileMaxChannels);
  if (info.channels > max_channels) {
    return AudioSkipStatus(
        AudioSkipReason::kTooManyChannels,
        absl::StrCat(info.channels, " channels, at most ", max_channels));
  }
  const bool length_known = info.frames != SF_COUNT_MAX;
  if (!length_known && major == SF_FORMAT_OGG) {
    // libsndfile finds an Ogg stream's length in its last page.
    return AudioSkipStatus(
        AudioSkipReason::kTruncated,
        absl::StrCat("Ogg stream whose last page cannot be found (",
                     bytes.size(), " bytes)"));
  }
  const sf_count_t max_frames = MaxFrames(limits, info.samplerate);
  if (length_known && info.frames > max_frames) {
    return AudioSkipStatus(
        AudioSkipReason::kTooLong,
        absl::StrCat("header gives ", Seconds(info.frames, info.samplerate),
                     " s, at most ", limits.max_seconds, " s"));
  }
  if (IsWav(major)) {
    if (const uint64_t missing = internal::WavDataShortfall(bytes)) {
      return AudioSkipStatus(
          AudioSkipReason::kLengthMismatch,
          absl::StrCat("WAV data chunk claims ", missing,
                       " bytes more than the clip's ", bytes.size()));
    }
  }

  // One frame past the limit tells a too-long clip from one of exactly
  // the limit.
  const sf_count_t limit = max_frames + 1;
  if (info.channels == 1 && length_known) {
    const sf_count_t expected =
        std::min({info.frames, limit, kMaxReserveFrames});
    out.samples.resize(static_cast<size_t>(expected));
    out.samples.resize(static_cast<size_t>(
        ReadMono(file.get(), out.samples.data(), expected)));
  } else if (length_known) {
    out.samples.reserve(
        static_cast<size_t>(std::min({info.frames, limit, kMaxReserveFrames})));
  }
  // All of a multi-channel or unknown-length clip; for a mono clip, frames
  // past the header's count.
  ReadMixedDown(file.get(), info.channels, limit, out.samples);

  const auto frames = static_cast<sf_count_t>(out.samples.size());
  if (const int error = sf_error(file.get()); error != SF_ERR_NO_ERROR) {
    return AudioSkipStatus(
        AudioSkipReason::kTruncated,
        absl::StrCat(kind, " decoder error after ", frames, " of ", info.frames,
                     " frames: ", sf_strerror(file.get())));
  }
  if (frames > max_frames) {
    return AudioSkipStatus(
        AudioSkipReason::kTooLong,
        absl::StrCat("more than ", limits.max_seconds,
                     " s decoded from a header that gives ",
                     Seconds(info.frames, info.samplerate), " s"));
  }
  if (frames == 0) {
    return AudioSkipStatus(AudioSkipReason::kEmptyClip,
                           absl::StrCat(kind, " clip with 0 frames"));
  }
  if (length_known && frames < info.frames) {
    return AudioSkipStatus(
        IsWav(major) ? AudioSkipReason::kLengthMismatch
                     : AudioSkipReason::kTruncated,
        absl::StrCat(kind, " stream ends after ", frames, " of the ",
                     info.frames, " frames its header announces"));
  }
  out.sample_rate = info.samplerate;
  out.source_channels = info.channels;
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeAudioInto(std::span<const std::byte> bytes,
                             const DecodeLimits& limits, DecodedAudio& out) {
  out.sample_rate = 0;
  out.source_channels = 0;
  out.samples.clear();
  absl::Status status = Decode(bytes, limits, out);
  if (!status.ok()) out.samples.clear();
  return status;
}

absl::StatusOr<DecodedAudio> DecodeAudio(std::span<const std::byte> bytes,
                                         const DecodeLimits& limits) {
  DecodedAudio decoded;
  absl::Status status = DecodeAudioInto(bytes, limits, decoded);
  if (!status.ok()) return status;
  return decoded;
}

}  // namespace sluice::audio
