#include "stages/lc0/chess/internal/syzygy_checksum.h"

#include <cstring>
#include <vector>

namespace sluice::lc0::chess::internal {
namespace {

constexpr uint64_t kK0 = 0xc3a5c85c97cb3127ull;
constexpr uint64_t kK1 = 0xb492b66fbe98f273ull;
constexpr uint64_t kK3 = 0xc949d7c7509e6557ull;
constexpr size_t kPieceBytes = size_t{1} << 24;

uint64_t Load64(const uint8_t* p) {
  uint64_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

uint64_t RotateRight(uint64_t value, int shift) {
  return shift == 0 ? value : (value >> shift) | (value << (64 - shift));
}

uint64_t ShiftMix(uint64_t value) { return value ^ (value >> 47); }

// Murmur-inspired mix of 128 bits down to 64.
uint64_t Mix128(uint64_t low, uint64_t high) {
  constexpr uint64_t kMul = 0x9ddfea08eb382d69ull;
  uint64_t a = (low ^ high) * kMul;
  a ^= a >> 47;
  uint64_t b = (high ^ a) * kMul;
  b ^= b >> 47;
  return b * kMul;
}

struct Pair {
  uint64_t first;
  uint64_t second;
};

// CRC-32C (Castagnoli) of the 8 little-endian bytes of `value` on top of
// `crc`, without pre- or post-inversion (what SSE4.2's crc32 does).
uint64_t Crc32cWord(uint64_t crc, uint64_t value) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int bit = 0; bit < 8; ++bit) {
        c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      }
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = static_cast<uint32_t>(crc);
  for (int byte = 0; byte < 8; ++byte) {
    c = table[(c ^ (value >> (8 * byte))) & 0xFF] ^ (c >> 8);
  }
  return c;
}

uint64_t HashUpTo16(const uint8_t* s, size_t len) {
  constexpr uint64_t kK2 = 0x9ae16a3b2f90404full;
  if (len > 8) {
    const uint64_t a = Load64(s);
    const uint64_t b = Load64(s + len - 8);
    return Mix128(a, RotateRight(b + len, static_cast<int>(len))) ^ b;
  }
  if (len >= 4) {
    uint32_t a;
    uint32_t b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + len - 4, 4);
    return Mix128(len + (uint64_t{a} << 3), b);
  }
  if (len > 0) {
    const uint32_t y = uint32_t{s[0]} + (uint32_t{s[len >> 1]} << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (uint32_t{s[len - 1]} << 2);
    return ShiftMix(y * kK2 ^ z * kK3) * kK2;
  }
  return kK2;
}

// Mixes 32 bytes w, x, y, z into the seeds a, b.
Pair WeakHash32(uint64_t w, uint64_t x, uint64_t y, uint64_t z, uint64_t a,
                uint64_t b) {
  a += w;
  b = RotateRight(b + a + z, 21);
  const uint64_t c = a;
  a += x;
  a += y;
  b += RotateRight(a, 44);
  return {a + z, b + c};
}

Pair WeakHash32At(const uint8_t* s, uint64_t a, uint64_t b) {
  return WeakHash32(Load64(s), Load64(s + 8), Load64(s + 16), Load64(s + 24), a,
                    b);
}

// The 128-bit hash of short inputs (under 128 bytes) with a seed.
Pair MurmurStyle128(const uint8_t* s, size_t len, Pair seed) {
  uint64_t a = seed.first;
  uint64_t b = seed.second;
  uint64_t c = 0;
  uint64_t d = 0;
  if (len <= 16) {
    a = ShiftMix(a * kK1) * kK1;
    c = b * kK1 + HashUpTo16(s, len);
    d = ShiftMix(a + (len >= 8 ? Load64(s) : c));
  } else {
    c = Mix128(Load64(s + len - 8) + kK1, a);
    d = Mix128(b + len, c + Load64(s + len - 16));
    a += d;
    long remaining = static_cast<long>(len) - 16;
    do {
      a ^= ShiftMix(Load64(s) * kK1) * kK1;
      a *= kK1;
      b ^= a;
      c ^= ShiftMix(Load64(s + 8) * kK1) * kK1;
      c *= kK1;
      d ^= c;
      s += 16;
      remaining -= 16;
    } while (remaining > 0);
  }
  a = Mix128(a, c);
  b = Mix128(d, b);
  return {a ^ b, Mix128(b, a)};
}

// One 64-byte step of the long 128-bit hash.
void Step64(const uint8_t* s, uint64_t& x, uint64_t& y, uint64_t& z, Pair& v,
            Pair& w) {
  x = RotateRight(x + y + v.first + Load64(s + 8), 37) * kK1;
  y = RotateRight(y + v.second + Load64(s + 48), 42) * kK1;
  x ^= w.second;
  y += v.first + Load64(s + 40);
  z = RotateRight(z + w.first, 33) * kK1;
  v = WeakHash32At(s, v.second * kK1, x + w.first);
  w = WeakHash32At(s + 32, z + w.second, y + Load64(s + 16));
  std::swap(z, x);
}

Pair City128WithSeed(const uint8_t* s, size_t len, Pair seed) {
  if (len < 128) return MurmurStyle128(s, len, seed);
  uint64_t x = seed.first;
  uint64_t y = seed.second;
  uint64_t z = len * kK1;
  Pair v;
  v.first = RotateRight(y ^ kK1, 49) * kK1 + Load64(s);
  v.second = RotateRight(v.first, 42) * kK1 + Load64(s + 8);
  Pair w;
  w.first = RotateRight(y + z, 35) * kK1 + x;
  w.second = RotateRight(x + Load64(s + 88), 53) * kK1;
  do {
    Step64(s, x, y, z, v, w);
    s += 64;
    Step64(s, x, y, z, v, w);
    s += 64;
    len -= 128;
  } while (len >= 128);
  x += RotateRight(v.first + z, 49) * kK0;
  z += RotateRight(w.first, 37) * kK0;
  // Up to four 32-byte pieces from the end of what is left.
  for (size_t done = 0; done < len;) {
    done += 32;
    y = RotateRight(x + y, 42) * kK0 + v.second;
    w.first += Load64(s + len - done + 16);
    x = x * kK0 + w.first;
    z += w.second + Load64(s + len - done);
    w.second += v.first;
    v = WeakHash32At(s + len - done, v.first + z, v.second);
  }
  x = Mix128(x, v.first);
  y = Mix128(y + z, w.first);
  return {Mix128(x + v.second, w.second) + y,
          Mix128(x + w.second, y + v.second)};
}

Pair City128(const uint8_t* s, size_t len) {
  if (len >= 16) {
    return City128WithSeed(s + 16, len - 16, {Load64(s) ^ kK3, Load64(s + 8)});
  }
  if (len >= 8) {
    return City128WithSeed(
        nullptr, 0, {Load64(s) ^ (len * kK0), Load64(s + len - 8) ^ kK1});
  }
  return City128WithSeed(s, len, {kK0, kK1});
}

// CityHashCrc256 of at least 240 bytes.
std::array<uint64_t, 4> Crc256Long(const uint8_t* s, size_t len,
                                   uint32_t seed) {
  std::array<uint64_t, 4> result{};
  uint64_t a = Load64(s + 56) + kK0;
  uint64_t b = Load64(s + 96) + kK0;
  uint64_t c = result[0] = Mix128(b, len);
  uint64_t d = result[1] = Load64(s + 120) * kK0 + len;
  uint64_t e = Load64(s + 184) + seed;
  uint64_t f = seed;
  uint64_t g = 0;
  uint64_t h = 0;
  uint64_t i = 0;
  uint64_t j = 0;
  uint64_t t = c + d;
  // 40 bytes rotated into the five lanes, each lane's CRC updated.
  auto piece = [&](uint64_t multiplier, int z) {
    const uint64_t old_a = a;
    a = RotateRight(b, 41 ^ z) * multiplier + Load64(s);
    b = RotateRight(c, 27 ^ z) * multiplier + Load64(s + 8);
    c = RotateRight(d, 41 ^ z) * multiplier + Load64(s + 16);
    d = RotateRight(e, 33 ^ z) * multiplier + Load64(s + 24);
    e = RotateRight(t, 25 ^ z) * multiplier + Load64(s + 32);
    t = old_a;
    f = Crc32cWord(f, a);
    g = Crc32cWord(g, b);
    h = Crc32cWord(h, c);
    i = Crc32cWord(i, d);
    j = Crc32cWord(j, e);
    s += 40;
  };
  size_t rounds = len / 240;
  len -= rounds * 240;
  do {
    for (int k = 0; k < 3; ++k) {
      piece(1, 1);
      piece(kK0, 0);
    }
  } while (--rounds > 0);
  while (len >= 40) {
    piece(kK0, 0);
    len -= 40;
  }
  if (len > 0) {
    s = s + len - 40;
    piece(kK0, 0);
  }
  j += i << 32;
  a = Mix128(a, j);
  h += g << 32;
  b += h;
  c = Mix128(c, f) + i;
  d = Mix128(d, e + result[0]);
  j += e;
  i += Mix128(h, t);
  e = Mix128(a, d) + j;
  f = Mix128(b, c) + a;
  g = Mix128(j, i) + c;
  result[0] = e + f + g + h;
  a = ShiftMix((a + g) * kK0) * kK0 + b;
  result[1] += a + result[0];
  a = ShiftMix(a * kK0) * kK0 + c;
  result[2] = a + result[1];
  a = ShiftMix((a + e) * kK0) * kK0;
  result[3] = a + result[2];
  return result;
}

}  // namespace

std::array<uint64_t, 4> CityHashCrc256(const uint8_t* data, size_t size) {
  if (size >= 240) return Crc256Long(data, size, 0);
  uint8_t padded[240] = {};
  std::memcpy(padded, data, size);
  return Crc256Long(padded, 240, ~static_cast<uint32_t>(size));
}

std::array<uint64_t, 2> CityHashCrc128(const uint8_t* data, size_t size) {
  if (size <= 900) {
    const Pair hash = City128(data, size);
    return {hash.first, hash.second};
  }
  const std::array<uint64_t, 4> hash = CityHashCrc256(data, size);
  return {hash[2], hash[3]};
}

bool SyzygyChecksumMatches(const uint8_t* file, size_t size) {
  if (size % 64 != 16) return false;
  const size_t body = size - 16;
  std::vector<uint64_t> pieces;
  for (size_t start = 0; start < body; start += kPieceBytes) {
    const size_t length = std::min(kPieceBytes, body - start);
    const std::array<uint64_t, 4> hash = CityHashCrc256(file + start, length);
    pieces.insert(pieces.end(), hash.begin(), hash.end());
  }
  const std::array<uint64_t, 2> checksum = CityHashCrc128(
      reinterpret_cast<const uint8_t*>(pieces.data()), pieces.size() * 8);
  return checksum[0] == Load64(file + body) &&
         checksum[1] == Load64(file + body + 8);
}

}  // namespace sluice::lc0::chess::internal
