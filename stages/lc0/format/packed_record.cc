#include "stages/lc0/format/packed_record.h"

#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice::lc0 {
namespace {

// The record's bytes before and after the policy, kept verbatim.
constexpr size_t kHeadBytes = offsetof(V6TrainingRecord, probabilities);
constexpr size_t kPolicyBytes = kPolicySize * sizeof(float);
constexpr size_t kTailBytes = kV6RecordSize - kHeadBytes - kPolicyBytes;
constexpr size_t kFixedBytes = kHeadBytes + kTailBytes;
// One policy pair: a uint16 index (in a first array) and a float.
constexpr size_t kPairBytes = sizeof(uint16_t) + sizeof(float);
// Beyond this many pairs, the whole policy is smaller.
constexpr size_t kMaxPairs = kPolicyBytes / kPairBytes;
constexpr uint32_t kMarkerBits = 0xBF800000u;  // -1.0f

static_assert(kPolicySize < 0xFFFF);

// Appends to `indices` the policy entries that are not the marker, in
// order; returns their count. Most entries are markers: on x86 four at a
// time are compared and skipped together.
size_t FindPolicyEntries(const std::byte* policy, uint16_t* indices) {
  size_t count = 0;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i marker = _mm_set1_epi32(static_cast<int>(kMarkerBits));
  for (; i + 4 <= kPolicySize; i += 4) {
    const __m128i values = _mm_loadu_si128(
        reinterpret_cast<const __m128i*>(policy + i * sizeof(uint32_t)));
    const int equal =
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(values, marker)));
    if (equal == 0xF) continue;
    for (int lane = 0; lane < 4; ++lane) {
      indices[count] = static_cast<uint16_t>(i + lane);
      count += ((equal >> lane) & 1) == 0;
    }
  }
#endif
  for (; i < kPolicySize; ++i) {
    uint32_t bits;
    std::memcpy(&bits, policy + i * sizeof(uint32_t), sizeof(bits));
    indices[count] = static_cast<uint16_t>(i);
    count += bits != kMarkerBits;
  }
  return count;
}

}  // namespace

PackedRecord PackedRecord::Pack(const V6TrainingRecord& record) {
  const auto* raw = reinterpret_cast<const std::byte*>(&record);
  const std::byte* policy_in = raw + kHeadBytes;
  uint16_t indices[kPolicySize];
  const size_t pairs = FindPolicyEntries(policy_in, indices);
  PackedRecord packed;
  const bool whole = pairs > kMaxPairs;
  const size_t policy_bytes = whole ? kPolicyBytes : pairs * kPairBytes;
  packed.bytes_ =
      std::make_unique_for_overwrite<std::byte[]>(kFixedBytes + policy_bytes);
  packed.policy_entries_ = whole ? kWholePolicy : static_cast<uint16_t>(pairs);
  std::byte* out = packed.bytes_.get();
  std::memcpy(out, raw, kHeadBytes);
  std::memcpy(out + kHeadBytes, raw + kHeadBytes + kPolicyBytes, kTailBytes);
  out += kFixedBytes;
  if (whole) {
    std::memcpy(out, raw + kHeadBytes, kPolicyBytes);
    return packed;
  }
  std::memcpy(out, indices, pairs * sizeof(uint16_t));
  out += pairs * sizeof(uint16_t);
  for (size_t p = 0; p < pairs; ++p) {
    std::memcpy(out + p * sizeof(uint32_t),
                policy_in + indices[p] * sizeof(uint32_t), sizeof(uint32_t));
  }
  return packed;
}

void PackedRecord::Unpack(V6TrainingRecord* out) const {
  auto* raw = reinterpret_cast<std::byte*>(out);
  const std::byte* in = bytes_.get();
  std::memcpy(raw, in, kHeadBytes);
  std::memcpy(raw + kHeadBytes + kPolicyBytes, in + kHeadBytes, kTailBytes);
  in += kFixedBytes;
  std::byte* policy = raw + kHeadBytes;
  if (policy_entries_ == kWholePolicy) {
    std::memcpy(policy, in, kPolicyBytes);
    return;
  }
  static const auto* const kMarkers = [] {
    auto* markers = new std::array<uint32_t, kPolicySize>;
    markers->fill(kMarkerBits);
    return markers;
  }();
  std::memcpy(policy, kMarkers->data(), kPolicyBytes);
  const std::byte* values = in + policy_entries_ * sizeof(uint16_t);
  for (size_t p = 0; p < policy_entries_; ++p) {
    uint16_t index;
    std::memcpy(&index, in + p * sizeof(uint16_t), sizeof(index));
    std::memcpy(policy + index * sizeof(uint32_t),
                values + p * sizeof(uint32_t), sizeof(uint32_t));
  }
}

uint32_t PackedRecord::version() const {
  uint32_t version;
  std::memcpy(&version, bytes_.get() + offsetof(V6TrainingRecord, version),
              sizeof(version));
  return version;
}

uint32_t PackedRecord::input_format() const {
  uint32_t format;
  std::memcpy(&format, bytes_.get() + offsetof(V6TrainingRecord, input_format),
              sizeof(format));
  return format;
}

size_t PackedRecord::heap_bytes() const {
  if (bytes_ == nullptr) return 0;
  return kFixedBytes + (policy_entries_ == kWholePolicy
                            ? kPolicyBytes
                            : policy_entries_ * kPairBytes);
}

}  // namespace sluice::lc0
