#include "stages/lc0/format/packed_record.h"

#include <algorithm>
#include <cstring>

#include "stages/lc0/format/record_blocks.h"

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
constexpr uint32_t kIllegalMoveBits = 0xBF800000u;  // -1.0f

static_assert(kPolicySize < 0xFFFF);

// Sets every policy entry of `out` to the float with these bits.
void FillPolicy(V6TrainingRecord* out, uint32_t bits) {
  std::byte* policy = reinterpret_cast<std::byte*>(out) + kHeadBytes;
  for (size_t i = 0; i < kPolicySize; ++i) {
    std::memcpy(policy + i * sizeof(uint32_t), &bits, sizeof(bits));
  }
}

}  // namespace

PackedRecord& PackedRecord::operator=(PackedRecord&& other) noexcept {
  if (this != &other) {
    record_blocks::Free(bytes_, heap_bytes());
    bytes_ = std::exchange(other.bytes_, nullptr);
    policy_entries_ = other.policy_entries_;
  }
  return *this;
}

PackedRecord::~PackedRecord() { record_blocks::Free(bytes_, heap_bytes()); }

PackedRecord PackedRecord::Pack(const V6TrainingRecord& record) {
  return Pack(record, PolicyEntries::Find(record), nullptr);
}

PackedRecord PackedRecord::Pack(const V6TrainingRecord& record,
                                const PolicyEntries& entries,
                                const V7Tail* v7_tail) {
  const auto* raw = reinterpret_cast<const std::byte*>(&record);
  const std::byte* policy_in = raw + kHeadBytes;
  const size_t pairs = entries.count;
  PackedRecord packed;
  const bool whole = pairs > kMaxPairs;
  const size_t policy_bytes = whole ? kPolicyBytes : pairs * kPairBytes;
  const size_t tail_bytes = record.version == 7 ? sizeof(V7Tail) : 0;
  packed.bytes_ =
      record_blocks::Allocate(kFixedBytes + tail_bytes + policy_bytes);
  packed.policy_entries_ = whole ? kWholePolicy : static_cast<uint16_t>(pairs);
  std::byte* out = packed.bytes_;
  std::memcpy(out, raw, kHeadBytes);
  std::memcpy(out + kHeadBytes, raw + kHeadBytes + kPolicyBytes, kTailBytes);
  out += kFixedBytes;
  if (tail_bytes > 0) {
    V7Tail tail{};
    if (v7_tail != nullptr) {
      tail = *v7_tail;
    } else {
      std::memcpy(&tail.q_st, &record.reserved, sizeof(tail.q_st));
      tail.opp_played_idx = tail.next_played_idx = kNoPlayedIdx;
    }
    std::memcpy(out, &tail, sizeof(tail));
    out += sizeof(tail);
  }
  if (whole) {
    std::memcpy(out, raw + kHeadBytes, kPolicyBytes);
    return packed;
  }
  std::memcpy(out, entries.index.data(), pairs * sizeof(uint16_t));
  out += pairs * sizeof(uint16_t);
  for (size_t p = 0; p < pairs; ++p) {
    std::memcpy(out + p * sizeof(uint32_t),
                policy_in + entries.index[p] * sizeof(uint32_t),
                sizeof(uint32_t));
  }
  return packed;
}

void PackedRecord::Unpack(V6TrainingRecord* out) const {
  UnpackAllButPolicy(out);
  FillPolicy(out, kIllegalMoveBits);
  ScatterPolicy(out);
}

void PackedRecord::UnpackAllButPolicy(V6TrainingRecord* out) const {
  auto* raw = reinterpret_cast<std::byte*>(out);
  std::memcpy(raw, bytes_, kHeadBytes);
  std::memcpy(raw + kHeadBytes + kPolicyBytes, bytes_ + kHeadBytes, kTailBytes);
}

void PackedRecord::ScatterPolicy(V6TrainingRecord* out) const {
  const std::byte* in = bytes_ + PolicyOffset();
  if (policy_entries_ == kWholePolicy) {
    std::memcpy(reinterpret_cast<std::byte*>(out) + kHeadBytes, in,
                kPolicyBytes);
    return;
  }
  WriteEntries(out, in + policy_entries_ * sizeof(uint16_t), sizeof(uint32_t));
}

void PackedRecord::RestoreMarkers(V6TrainingRecord* out) const {
  if (policy_entries_ == kWholePolicy) {
    FillPolicy(out, kIllegalMoveBits);
    return;
  }
  WriteEntries(out, reinterpret_cast<const std::byte*>(&kIllegalMoveBits), 0);
}

void PackedRecord::WriteEntries(V6TrainingRecord* out, const std::byte* values,
                                size_t value_stride) const {
  std::byte* policy = reinterpret_cast<std::byte*>(out) + kHeadBytes;
  const std::byte* indices = bytes_ + PolicyOffset();
  for (size_t p = 0; p < policy_entries_; ++p) {
    uint16_t index;
    std::memcpy(&index, indices + p * sizeof(uint16_t), sizeof(index));
    std::memcpy(policy + index * sizeof(uint32_t), values + p * value_stride,
                sizeof(uint32_t));
  }
}

void PackedRecord::Prefetch() const {
  // The first lines only: the hardware prefetcher follows the sequential
  // reads of the rest, and fewer hints keep the fill buffers free.
  constexpr size_t kLineBytes = 64;
  const size_t bytes = std::min<size_t>(heap_bytes(), 4 * kLineBytes);
  for (size_t at = 0; at < bytes; at += kLineBytes) {
    __builtin_prefetch(bytes_ + at);
  }
}

uint32_t PackedRecord::version() const {
  uint32_t version;
  std::memcpy(&version, bytes_ + offsetof(V6TrainingRecord, version),
              sizeof(version));
  return version;
}

uint32_t PackedRecord::input_format() const {
  uint32_t format;
  std::memcpy(&format, bytes_ + offsetof(V6TrainingRecord, input_format),
              sizeof(format));
  return format;
}

size_t PackedRecord::heap_bytes() const {
  if (bytes_ == nullptr) return 0;
  return PolicyOffset() + (policy_entries_ == kWholePolicy
                               ? kPolicyBytes
                               : policy_entries_ * kPairBytes);
}

size_t PackedRecord::PolicyOffset() const {
  return kFixedBytes + (version() == 7 ? sizeof(V7Tail) : 0);
}

std::optional<V7Tail> PackedRecord::v7_tail() const {
  if (version() != 7) return std::nullopt;
  V7Tail tail;
  std::memcpy(&tail, bytes_ + kFixedBytes, sizeof(tail));
  return tail;
}

}  // namespace sluice::lc0
