// Stable hashing and randomness: the same values on every machine, compiler
// and standard library (unlike std::hash and std::uniform_int_distribution),
// so chunk identities, split assignments and shuffles are reproducible.
//
//   uint64_t id = HashCombine(Fnv1a64(name), index);
//   StableRandom random(seed);
//   uint64_t pick = random.Below(n);  // uniform in [0, n)
#ifndef SLUICE_ENGINE_STABLE_HASH_H_
#define SLUICE_ENGINE_STABLE_HASH_H_

#include <cstdint>
#include <string_view>

namespace sluice {

// 64-bit FNV-1a of the bytes of `text`.
constexpr uint64_t Fnv1a64(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// The splitmix64 finaliser: a bijection that mixes every input bit into
// every output bit.
constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A well-mixed hash of the pair (a, b); not symmetric.
constexpr uint64_t HashCombine(uint64_t a, uint64_t b) {
  return Mix64(a ^ Mix64(b));
}

// A small deterministic generator (splitmix64). Not thread-safe.
class StableRandom {
 public:
  explicit StableRandom(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t x = state_;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  // Uniform in [0, bound); `bound` must be at least 1. Unbiased (Lemire's
  // multiply-and-reject).
  uint64_t Below(uint64_t bound) {
    unsigned __int128 product = static_cast<unsigned __int128>(Next()) * bound;
    uint64_t low = static_cast<uint64_t>(product);
    if (low < bound) {
      const uint64_t threshold = -bound % bound;
      while (low < threshold) {
        product = static_cast<unsigned __int128>(Next()) * bound;
        low = static_cast<uint64_t>(product);
      }
    }
    return static_cast<uint64_t>(product >> 64);
  }

  // The whole state: StableRandom(state()) continues this sequence.
  uint64_t state() const { return state_; }

  // Uniform in [0, 1) with 53 random bits.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_STABLE_HASH_H_
