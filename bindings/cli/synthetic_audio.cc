#include "bindings/cli/synthetic_audio.h"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bindings/cli/internal/sndfile_memory.h"
#include "engine/stable_hash.h"

namespace sluice::cli {
namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;
// The highest frequency synthesised, as a fraction of the sample rate.
constexpr double kMaxFrequencyOfRate = 0.45;
constexpr double kFadeSeconds = 0.005;
constexpr double kClickHz = 1500;
constexpr double kClickDecaySeconds = 0.002;
constexpr double kClickSeconds = 0.012;

// The class's sound, mono, at `sample_rate`, before scaling.
std::vector<double> RenderSound(const ClassSound& sound, int sample_rate,
                                int64_t frames, StableRandom& random) {
  std::vector<double> out(frames);
  const double rate = sample_rate;
  const double top = kMaxFrequencyOfRate * rate;
  const double phase = kTwoPi * random.Unit();
  switch (sound.kind) {
    case SoundKind::kTone: {
      const double f = std::min(sound.low_hz, top / 2);
      for (int64_t i = 0; i < frames; ++i) {
        const double t = i / rate;
        out[i] = std::sin(kTwoPi * f * t + phase) +
                 std::sin(2 * (kTwoPi * f * t + phase)) / 3;
      }
      break;
    }
    case SoundKind::kChirp: {
      // Exponential sweep from `from` to `to` over the clip: the phase is
      // the integral of from * (to / from)^(t / T).
      const double low = std::min(sound.low_hz, top);
      const double high = std::min(sound.high_hz, top);
      const double from = sound.falling ? high : low;
      const double to = sound.falling ? low : high;
      const double seconds = frames / rate;
      const double k = std::log(to / from);
      for (int64_t i = 0; i < frames; ++i) {
        const double t = i / rate;
        out[i] = std::sin(kTwoPi * from * seconds / k *
                              (std::exp(k * t / seconds) - 1) +
                          phase);
      }
      break;
    }
    case SoundKind::kNoiseBand: {
      // White noise through two RBJ band-pass biquads at the band's centre.
      const double centre = std::sqrt(sound.low_hz * sound.high_hz);
      const double w0 = kTwoPi * std::min(centre, top) / rate;
      const double alpha =
          std::sin(w0) / (2 * centre / (sound.high_hz - sound.low_hz));
      const double a0 = 1 + alpha;
      const double b0 = alpha / a0, a1 = -2 * std::cos(w0) / a0,
                   a2 = (1 - alpha) / a0;
      for (int64_t i = 0; i < frames; ++i) out[i] = 2 * random.Unit() - 1;
      for (int pass = 0; pass < 2; ++pass) {
        double x1 = 0, x2 = 0, y1 = 0, y2 = 0;
        for (double& v : out) {
          const double y = b0 * (v - x2) - a1 * y1 - a2 * y2;
          x2 = x1;
          x1 = v;
          y2 = y1;
          y1 = y;
          v = y;
        }
      }
      break;
    }
    case SoundKind::kClickTrain: {
      const double period = 1 / sound.rate_hz;
      const double click_hz = std::min(kClickHz, top);
      for (double start = period * random.Unit(); start * rate < frames;
           start += period) {
        const int64_t first = static_cast<int64_t>(std::ceil(start * rate));
        const int64_t end = std::min<int64_t>(
            frames, static_cast<int64_t>((start + kClickSeconds) * rate));
        for (int64_t i = first; i < end; ++i) {
          const double t = i / rate - start;
          out[i] += std::exp(-t / kClickDecaySeconds) *
                    std::sin(kTwoPi * click_hz * t);
        }
      }
      break;
    }
  }
  return out;
}

int SndfileFormat(AudioEncoding encoding) {
  switch (encoding) {
    case AudioEncoding::kWavPcm16:
      return SF_FORMAT_WAV | SF_FORMAT_PCM_16;
    case AudioEncoding::kWavFloat:
      return SF_FORMAT_WAV | SF_FORMAT_FLOAT;
    case AudioEncoding::kFlac:
      return SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
    case AudioEncoding::kOggVorbis:
      return SF_FORMAT_OGG | SF_FORMAT_VORBIS;
  }
  return 0;
}

// The byte offset and size of a RIFF/WAVE file's "data" chunk.
absl::StatusOr<std::pair<size_t, size_t>> WavDataChunk(
    std::span<const std::byte> wav) {
  size_t chunk = 12;  // after "RIFF", the size and "WAVE"
  while (chunk + 8 <= wav.size()) {
    uint32_t size = 0;
    std::memcpy(&size, wav.data() + chunk + 4, 4);
    if (std::memcmp(wav.data() + chunk, "data", 4) == 0) {
      return std::pair<size_t, size_t>(chunk + 8, size);
    }
    chunk += 8 + size + (size & 1);
  }
  return absl::InternalError("libsndfile wrote a WAV without a data chunk");
}

}  // namespace

std::string_view SoundKindName(SoundKind kind) {
  switch (kind) {
    case SoundKind::kTone:
      return "tone";
    case SoundKind::kChirp:
      return "chirp";
    case SoundKind::kNoiseBand:
      return "noise-band";
    case SoundKind::kClickTrain:
      return "click-train";
  }
  return "?";
}

ClassSound SoundOfClass(int64_t label) {
  const int64_t q = label / kSoundKinds;
  ClassSound sound{.kind = static_cast<SoundKind>(label % kSoundKinds)};
  switch (sound.kind) {
    case SoundKind::kTone:
      sound.low_hz = sound.high_hz =
          110 * std::exp2((q % 24) / 6.0) + 3.0 * (q / 24);
      break;
    case SoundKind::kChirp:
      sound.low_hz = 200 * std::exp2((q % 16) / 8.0) + 7.0 * (q / 16);
      sound.high_hz = 4 * sound.low_hz;
      sound.falling = q % 2 == 1;
      break;
    case SoundKind::kNoiseBand: {
      const double centre = 300 * std::exp2((q % 12) / 4.0) + 11.0 * (q / 12);
      sound.low_hz = centre * 7 / 8;
      sound.high_hz = centre * 9 / 8;
      break;
    }
    case SoundKind::kClickTrain:
      sound.rate_hz = 3 + 2.0 * (q % 20) + 0.125 * (q / 20);
      break;
  }
  return sound;
}

std::string_view AudioEncodingName(AudioEncoding encoding) {
  switch (encoding) {
    case AudioEncoding::kWavPcm16:
      return "wav-pcm16";
    case AudioEncoding::kWavFloat:
      return "wav-float";
    case AudioEncoding::kFlac:
      return "flac";
    case AudioEncoding::kOggVorbis:
      return "ogg-vorbis";
  }
  return "?";
}

std::string_view AudioEncodingExtension(AudioEncoding encoding) {
  switch (encoding) {
    case AudioEncoding::kWavPcm16:
    case AudioEncoding::kWavFloat:
      return "wav";
    case AudioEncoding::kFlac:
      return "flac";
    case AudioEncoding::kOggVorbis:
      return "ogg";
  }
  return "?";
}

ClipSpec DrawClipSpec(uint64_t seed, int64_t index, int64_t classes) {
  StableRandom random(HashCombine(seed, static_cast<uint64_t>(index)));
  ClipSpec spec;
  spec.label = static_cast<int64_t>(random.Below(classes));
  spec.sample_rate = kClipSampleRates[random.Below(kClipSampleRates.size())];
  spec.encoding = static_cast<AudioEncoding>(random.Below(kAudioEncodings));
  spec.channels = 1 + static_cast<int>(random.Below(2));
  const double seconds =
      kMinClipSeconds + (kMaxClipSeconds - kMinClipSeconds) * random.Unit();
  spec.frames =
      std::clamp<int64_t>(std::llround(seconds * spec.sample_rate),
                          std::ceil(kMinClipSeconds * spec.sample_rate),
                          std::floor(kMaxClipSeconds * spec.sample_rate));
  spec.amplitude = static_cast<float>(0.25 + 0.55 * random.Unit());
  spec.right_gain = static_cast<float>(0.5 + 0.5 * random.Unit());
  spec.random_seed = random.Next();
  return spec;
}

std::vector<float> SynthesizeClip(const ClipSpec& spec) {
  StableRandom random(spec.random_seed);
  std::vector<double> mono = RenderSound(SoundOfClass(spec.label),
                                         spec.sample_rate, spec.frames, random);
  double peak = 0;
  for (double v : mono) peak = std::max(peak, std::abs(v));
  const double scale = peak > 0 ? spec.amplitude / peak : 0;
  const int64_t fade =
      std::max<int64_t>(1, std::llround(kFadeSeconds * spec.sample_rate));
  std::vector<float> out(spec.frames * spec.channels);
  for (int64_t i = 0; i < spec.frames; ++i) {
    const double edge = std::min(i, spec.frames - 1 - i);
    const double v =
        mono[i] * scale * std::min(1.0, edge / static_cast<double>(fade));
    out[i * spec.channels] = static_cast<float>(v);
    if (spec.channels == 2)
      out[i * 2 + 1] = static_cast<float>(v * spec.right_gain);
  }
  return out;
}

absl::StatusOr<std::vector<std::byte>> EncodeClip(
    const ClipSpec& spec, std::span<const float> samples) {
  if (static_cast<int64_t>(samples.size()) != spec.frames * spec.channels) {
    return absl::InvalidArgumentError(
        absl::StrCat(samples.size(), " samples for ", spec.frames,
                     " frames of ", spec.channels, " channels"));
  }
  absl::StatusOr<std::vector<std::byte>> bytes = internal::EncodeInMemory(
      samples, spec.sample_rate, spec.channels, SndfileFormat(spec.encoding));
  if (bytes.ok() && spec.encoding == AudioEncoding::kOggVorbis) {
    if (absl::Status status = internal::SetOggSerial(
            *bytes, static_cast<uint32_t>(Mix64(spec.random_seed)));
        !status.ok()) {
      return status;
    }
  }
  return bytes;
}

std::string_view CorruptKindName(CorruptKind kind) {
  switch (kind) {
    case CorruptKind::kRandomBytes:
      return "random-bytes";
    case CorruptKind::kTruncatedFlac:
      return "truncated-flac";
    case CorruptKind::kEmpty:
      return "empty";
    case CorruptKind::kWavFrameCountLie:
      return "wav-frame-count-lie";
  }
  return "?";
}

AudioEncoding ClaimedEncoding(CorruptKind kind, const ClipSpec& spec) {
  switch (kind) {
    case CorruptKind::kTruncatedFlac:
      return AudioEncoding::kFlac;
    case CorruptKind::kWavFrameCountLie:
      return AudioEncoding::kWavPcm16;
    case CorruptKind::kRandomBytes:
    case CorruptKind::kEmpty:
      break;
  }
  return spec.encoding;
}

absl::StatusOr<std::vector<std::byte>> MakeCorruptClip(CorruptKind kind,
                                                       const ClipSpec& spec) {
  switch (kind) {
    case CorruptKind::kRandomBytes: {
      StableRandom random(HashCombine(spec.random_seed, 1));
      std::vector<std::byte> bytes(64 + random.Below(4032));
      for (std::byte& b : bytes) b = static_cast<std::byte>(random.Next());
      return bytes;
    }
    case CorruptKind::kEmpty:
      return std::vector<std::byte>();
    case CorruptKind::kTruncatedFlac:
    case CorruptKind::kWavFrameCountLie:
      break;
  }
  ClipSpec claimed = spec;
  claimed.encoding = ClaimedEncoding(kind, spec);
  absl::StatusOr<std::vector<std::byte>> bytes =
      EncodeClip(claimed, SynthesizeClip(claimed));
  if (!bytes.ok()) return bytes.status();
  if (kind == CorruptKind::kTruncatedFlac) {
    bytes->resize(bytes->size() / 2);
    return bytes;
  }
  absl::StatusOr<std::pair<size_t, size_t>> data = WavDataChunk(*bytes);
  if (!data.ok()) return data.status();
  const size_t frame_bytes = 2 * static_cast<size_t>(spec.channels);
  bytes->resize(data->first + data->second / 2 / frame_bytes * frame_bytes);
  return bytes;
}

}  // namespace sluice::cli
