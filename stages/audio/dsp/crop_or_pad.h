// Crop or zero-pad a waveform to a fixed clip length, by the rules of the
// audio loader design (seed 004): training takes a random window (the same
// one for the same seed and index) and pads short waveforms at the end;
// evaluation takes the centre window and pads short waveforms equally on
// both sides (the extra sample, if any, on the right).
//
//   std::vector<float> clip(clip_length);  // reused from clip to clip
//   CropOrPad(waveform, seed, index, CropMode::kTrain, clip);
//
// Positions are given as a signed start: clip[i] = waveform[start + i] where
// that index is inside the waveform, else 0. A negative start is left
// padding (evaluation of a short waveform).
#ifndef SLUICE_STAGES_AUDIO_DSP_CROP_OR_PAD_H_
#define SLUICE_STAGES_AUDIO_DSP_CROP_OR_PAD_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace sluice::audio {

enum class CropMode {
  // Random crop start splitmix64(seed ^ index * 0xD6E8FEB86659FD93) %
  // (length - clip_length + 1); a short waveform is padded at the end.
  kTrain,
  // Centre crop start (length - clip_length) / 2; a short waveform gets
  // (clip_length - length) / 2 zeros on the left, the rest on the right.
  kEval,
};

// The start of the clip inside a waveform of `length` samples: in
// [0, length - clip_length] when length >= clip_length, 0 (training) or
// -(clip_length - length) / 2 (evaluation) when shorter. `seed` and `index`
// matter only for training. `index` is mixed in as its two's-complement
// uint64, as the seed's `index as u64` does.
int64_t CropStart(size_t length, size_t clip_length, uint64_t seed,
                  int64_t index, CropMode mode);

// Writes clip[i] = waveform[start + i] (0 outside the waveform) for every i
// in `clip`; `clip.size()` is the clip length. Allocates nothing.
void CopyClip(std::span<const float> waveform, int64_t start,
              std::span<float> clip);

// CopyClip at CropStart(waveform.size(), clip.size(), seed, index, mode).
void CropOrPad(std::span<const float> waveform, uint64_t seed, int64_t index,
               CropMode mode, std::span<float> clip);

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_DSP_CROP_OR_PAD_H_
