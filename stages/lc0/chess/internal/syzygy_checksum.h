// The checksum at the end of every Syzygy table file: the data (all but
// the last 16 bytes) in 16 MiB pieces, each hashed with CityHashCrc256,
// and the concatenated piece hashes hashed with CityHashCrc128 (CityHash
// v1.1 by Geoff Pike and Jyrki Alakuijala), stored as two little-endian
// 64-bit words.
#ifndef SLUICE_STAGES_LC0_CHESS_INTERNAL_SYZYGY_CHECKSUM_H_
#define SLUICE_STAGES_LC0_CHESS_INTERNAL_SYZYGY_CHECKSUM_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace sluice::lc0::chess::internal {

// CityHashCrc128 of `size` bytes.
std::array<uint64_t, 2> CityHashCrc128(const uint8_t* data, size_t size);
// CityHashCrc256 of `size` bytes.
std::array<uint64_t, 4> CityHashCrc256(const uint8_t* data, size_t size);

// Whether the file contents `file` (`size` bytes, 64k + 16) end with the
// checksum of the rest.
bool SyzygyChecksumMatches(const uint8_t* file, size_t size);

}  // namespace sluice::lc0::chess::internal

#endif  // SLUICE_STAGES_LC0_CHESS_INTERNAL_SYZYGY_CHECKSUM_H_
