// The audio stages' estimates for the memory model (engine/memory_model.h,
// docs/tuning.md). The model is built from the config before any clip is
// read, so the decoded size of a clip is an estimate from its encoded size.
#ifndef SLUICE_STAGES_AUDIO_MEMORY_ESTIMATES_H_
#define SLUICE_STAGES_AUDIO_MEMORY_ESTIMATES_H_

#include <cstdint>

namespace sluice::audio {

// A decoded float32 waveform per encoded byte: 2 for 16-bit PCM WAV, more
// for FLAC and the lossy codecs.
inline constexpr uint64_t kDecodedBytesPerEncodedByte = 4;
// What an Example holds beside its big field: the small fields (label,
// index, seed) and their names.
inline constexpr uint64_t kExampleOverheadBytes = 512;

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_MEMORY_ESTIMATES_H_
