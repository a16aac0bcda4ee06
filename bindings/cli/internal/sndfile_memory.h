// Encoding audio in memory with libsndfile (sf_open_virtual in write mode
// over a byte vector), and the fix that makes its Ogg output reproducible.
// Private to synthetic_audio.cc.
//
//   absl::StatusOr<std::vector<std::byte>> flac = EncodeInMemory(
//       samples, 16000, 1, SF_FORMAT_FLAC | SF_FORMAT_PCM_16);
#ifndef SLUICE_BINDINGS_CLI_INTERNAL_SNDFILE_MEMORY_H_
#define SLUICE_BINDINGS_CLI_INTERNAL_SNDFILE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice::cli::internal {

// The file libsndfile writes for `samples` (interleaved, `channels` per
// frame) in `format` (SF_FORMAT_* major | subtype), without WAV's PEAK chunk
// (it holds the time of writing). InvalidArgument when libsndfile refuses
// the format, rate or channel count; Internal when a write fails; both carry
// libsndfile's message.
absl::StatusOr<std::vector<std::byte>> EncodeInMemory(
    std::span<const float> samples, int sample_rate, int channels, int format);

// Gives every page of the Ogg stream `ogg` the serial number `serial` and a
// matching checksum: libsndfile draws the serial from the clock, so this
// makes its Ogg output a function of the samples. Internal when `ogg` is
// not a sequence of whole Ogg pages.
absl::Status SetOggSerial(std::vector<std::byte>& ogg, uint32_t serial);

}  // namespace sluice::cli::internal

#endif  // SLUICE_BINDINGS_CLI_INTERNAL_SNDFILE_MEMORY_H_
