#include "stages/audio/dsp/crop_or_pad.h"

#include <algorithm>

#include "engine/stable_hash.h"

namespace sluice::audio {

int64_t CropStart(size_t length, size_t clip_length, uint64_t seed,
                  int64_t index, CropMode mode) {
  if (length <= clip_length) {
    if (mode == CropMode::kTrain) return 0;
    return -static_cast<int64_t>((clip_length - length) / 2);
  }
  const uint64_t max_start = length - clip_length;
  if (mode == CropMode::kEval) return static_cast<int64_t>(max_start / 2);
  // Mix64 is the seed's splitmix64 (the increment included).
  const uint64_t r =
      Mix64(seed ^ static_cast<uint64_t>(index) * 0xD6E8FEB86659FD93ULL);
  return static_cast<int64_t>(r % (max_start + 1));
}

void CopyClip(std::span<const float> waveform, int64_t start,
              std::span<float> clip) {
  const int64_t length = static_cast<int64_t>(waveform.size());
  const int64_t clip_length = static_cast<int64_t>(clip.size());
  // The clip indices [first, last) that fall inside the waveform.
  const int64_t first = std::clamp<int64_t>(-start, 0, clip_length);
  const int64_t last = std::clamp<int64_t>(length - start, first, clip_length);
  std::fill(clip.begin(), clip.begin() + first, 0.0f);
  if (last > first) {
    std::copy(waveform.begin() + (start + first),
              waveform.begin() + (start + last), clip.begin() + first);
  }
  std::fill(clip.begin() + last, clip.end(), 0.0f);
}

void CropOrPad(std::span<const float> waveform, uint64_t seed, int64_t index,
               CropMode mode, std::span<float> clip) {
  CopyClip(waveform, CropStart(waveform.size(), clip.size(), seed, index, mode),
           clip);
}

}  // namespace sluice::audio
