#include "stages/lc0/format/policy_entries.h"

#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice::lc0 {
namespace {

constexpr uint32_t kMarkerBits = 0xBF800000u;  // -1.0f

}  // namespace

PolicyEntries PolicyEntries::Find(const V6TrainingRecord& record) {
  const auto* policy = reinterpret_cast<const std::byte*>(&record) +
                       offsetof(V6TrainingRecord, probabilities);
  PolicyEntries entries;
  size_t count = 0;
  size_t i = 0;
#if defined(__SSE2__)
  // Most entries are markers: sixteen at a time are compared and, when all
  // are markers, skipped together with one branch.
  const __m128i marker = _mm_set1_epi32(static_cast<int>(kMarkerBits));
  auto equal_mask = [&](size_t at) {
    const __m128i values = _mm_loadu_si128(
        reinterpret_cast<const __m128i*>(policy + at * sizeof(uint32_t)));
    return _mm_cmpeq_epi32(values, marker);
  };
  for (; i + 16 <= kPolicySize; i += 16) {
    const __m128i a = equal_mask(i);
    const __m128i b = equal_mask(i + 4);
    const __m128i c = equal_mask(i + 8);
    const __m128i d = equal_mask(i + 12);
    const __m128i all = _mm_and_si128(_mm_and_si128(a, b), _mm_and_si128(c, d));
    if (_mm_movemask_epi8(all) == 0xFFFF) continue;
    // Bit k of `equal` is set when entry i + k is a marker.
    const uint32_t equal =
        static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(a))) |
        static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(b))) << 4 |
        static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(c))) << 8 |
        static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(d))) << 12;
    for (uint32_t entries_here = ~equal & 0xFFFF; entries_here != 0;
         entries_here &= entries_here - 1) {
      entries.index[count++] =
          static_cast<uint16_t>(i + std::countr_zero(entries_here));
    }
  }
#endif
  for (; i < kPolicySize; ++i) {
    uint32_t bits;
    std::memcpy(&bits, policy + i * sizeof(uint32_t), sizeof(bits));
    entries.index[count] = static_cast<uint16_t>(i);
    count += bits != kMarkerBits;
  }
  entries.count = count;
  return entries;
}

}  // namespace sluice::lc0
