#include "stages/lc0/format/policy_entries.h"

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
  // Most entries are markers: four at a time are compared and, when all
  // four are markers, skipped together.
  const __m128i marker = _mm_set1_epi32(static_cast<int>(kMarkerBits));
  for (; i + 4 <= kPolicySize; i += 4) {
    const __m128i values = _mm_loadu_si128(
        reinterpret_cast<const __m128i*>(policy + i * sizeof(uint32_t)));
    const int equal =
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(values, marker)));
    if (equal == 0xF) continue;
    for (int lane = 0; lane < 4; ++lane) {
      entries.index[count] = static_cast<uint16_t>(i + lane);
      count += ((equal >> lane) & 1) == 0;
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
