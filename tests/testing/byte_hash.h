// A hash of byte ranges for tests that compare tensors or batches by hash
// within one run (values are not stable across versions: never store one).
// It reads eight bytes at a time, so an instrumented build (TSan, ASan)
// checks one access per word rather than per byte, with the same bytes
// checked; whole-pipeline tests hash megabytes per batch.
//
//   uint64_t hash = HashBytes(kByteHashStart, data, size);
//   hash = HashBytes(hash, more, more_size);  // continues the first
#ifndef SLUICE_TESTS_TESTING_BYTE_HASH_H_
#define SLUICE_TESTS_TESTING_BYTE_HASH_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sluice::testing {

inline constexpr uint64_t kByteHashStart = 0xcbf29ce484222325ULL;

// FNV-1a over 64-bit words (then the last bytes one at a time) of
// `bytes` bytes at `data`, continuing from `hash`.
inline uint64_t HashBytes(uint64_t hash, const void* data, size_t bytes) {
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  const auto* begin = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + sizeof(uint64_t) <= bytes; i += sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, begin + i, sizeof word);
    hash = (hash ^ word) * kPrime;
    hash ^= hash >> 32;
  }
  for (; i < bytes; ++i) hash = (hash ^ begin[i]) * kPrime;
  return hash;
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TESTING_BYTE_HASH_H_
