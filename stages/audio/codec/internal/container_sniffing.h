// Cheap checks on the raw bytes of a clip, done before and beside
// libsndfile: which container a clip claims to be (so libsndfile's parsers
// for formats we never accept are never reached), and whether a WAV's data
// chunk claims more bytes than the clip holds (libsndfile silently shortens
// such a clip, so its SF_INFO cannot tell).
//
//   switch (SniffContainer(bytes)) { case Container::kUnknown: ...refuse }
//   if (WavDataShortfall(bytes) > 0) ...refuse as length_mismatch
#ifndef SLUICE_STAGES_AUDIO_CODEC_INTERNAL_CONTAINER_SNIFFING_H_
#define SLUICE_STAGES_AUDIO_CODEC_INTERNAL_CONTAINER_SNIFFING_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace sluice::audio::internal {

enum class Container { kUnknown, kWav, kFlac, kOgg, kMpeg };

// The container the first bytes announce: "RIFF"/"RIFX"/"RF64" + "WAVE",
// "fLaC", "OggS", or an MPEG audio frame sync (11 set bits). Up to four
// leading ID3v2 tags are skipped first, as libsndfile does; what follows
// them must be one of these signatures too.
Container SniffContainer(std::span<const std::byte> bytes);

// For a RIFF/RIFX WAVE clip: how many bytes its first "data" chunk claims
// beyond the end of `bytes`. 0 when it fits, when no data chunk header is
// found, when the size is a streaming placeholder (0 or 0xFFFFFFFF), and for
// RF64 (whose sizes live in the ds64 chunk).
uint64_t WavDataShortfall(std::span<const std::byte> bytes);

}  // namespace sluice::audio::internal

#endif  // SLUICE_STAGES_AUDIO_CODEC_INTERNAL_CONTAINER_SNIFFING_H_
