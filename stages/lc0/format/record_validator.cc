#include "stages/lc0/format/record_validator.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace sluice::lc0 {
namespace {

constexpr double kProbabilitySumTolerance = 1e-3;

bool InRange(float value, float low, float high) {
  return value >= low && value <= high;  // false for NaN
}

// Only the entries that are not the marker can fail: each must be finite
// and not negative, and together they must sum to 1.
std::optional<RejectReason> CheckProbabilities(const V6TrainingRecord& rec,
                                               const PolicyEntries& entries) {
  bool any_nonfinite = false;
  bool any_negative = false;
  double legal_sum = 0.0;
  for (size_t i = 0; i < entries.count; ++i) {
    const float p = rec.probabilities[entries.index[i]];
    any_nonfinite |= !std::isfinite(p);
    any_negative |= p < 0.0f;
    if (p > 0.0f) legal_sum += p;
  }
  if (any_nonfinite) return RejectReason::kNonfiniteProbability;
  if (any_negative) return RejectReason::kNegativeProbability;
  // Records whose probabilities are all markers or zero skip the sum check.
  if (legal_sum > 0.0 && std::abs(legal_sum - 1.0) > kProbabilitySumTolerance) {
    return RejectReason::kProbabilitySum;
  }
  return std::nullopt;
}

bool HasNanField(const V6TrainingRecord& rec) {
  // Every float field except probabilities (checked apart) and orig_*.
  for (float f : {rec.root_q, rec.best_q, rec.root_d, rec.best_d, rec.root_m,
                  rec.best_m, rec.plies_left, rec.result_q, rec.result_d,
                  rec.played_q, rec.played_d, rec.played_m, rec.policy_kld}) {
    if (std::isnan(f)) return true;
  }
  return false;
}

}  // namespace

std::string_view RejectReasonName(RejectReason reason) {
  switch (reason) {
    case RejectReason::kEmptyChunk:
      return "empty_chunk";
    case RejectReason::kUnknownVersion:
      return "unknown_version";
    case RejectReason::kSizeNotMultiple:
      return "size_not_multiple";
    case RejectReason::kVersionMismatch:
      return "version_mismatch";
    case RejectReason::kUnexpectedInputFormat:
      return "unexpected_input_format";
    case RejectReason::kNonfiniteProbability:
      return "nonfinite_probability";
    case RejectReason::kNegativeProbability:
      return "negative_probability";
    case RejectReason::kProbabilitySum:
      return "probability_sum";
    case RejectReason::kNanField:
      return "nan_field";
    case RejectReason::kBestQRange:
      return "best_q_range";
    case RejectReason::kResultQRange:
      return "result_q_range";
    case RejectReason::kBestDRange:
      return "best_d_range";
    case RejectReason::kResultDRange:
      return "result_d_range";
    case RejectReason::kNegativePliesLeft:
      return "negative_plies_left";
    case RejectReason::kInvalidResult:
      return "invalid_result";
  }
  return "unknown_reason";
}

bool IsChunkLevel(RejectReason reason) {
  return reason == RejectReason::kEmptyChunk ||
         reason == RejectReason::kUnknownVersion ||
         reason == RejectReason::kSizeNotMultiple;
}

ChunkCheck CheckChunk(std::string_view chunk) {
  ChunkCheck check;
  if (chunk.empty()) {
    check.reject = RejectReason::kEmptyChunk;
    return check;
  }
  absl::StatusOr<RecordVersion> version = DetectVersion(chunk);
  if (!version.ok()) {
    check.reject = chunk.size() < sizeof(uint32_t)
                       ? RejectReason::kSizeNotMultiple
                       : RejectReason::kUnknownVersion;
    return check;
  }
  const size_t record_size = RecordSize(*version);
  if (chunk.size() % record_size != 0) {
    check.reject = RejectReason::kSizeNotMultiple;
    return check;
  }
  check.version = *version;
  check.record_size = record_size;
  check.record_count = chunk.size() / record_size;
  return check;
}

std::optional<RejectReason> CheckRecord(const V6TrainingRecord& record,
                                        RecordVersion chunk_version,
                                        uint32_t expected_input_format) {
  return CheckRecord(record, PolicyEntries::Find(record), chunk_version,
                     expected_input_format);
}

std::optional<RejectReason> CheckRecord(const V6TrainingRecord& record,
                                        const PolicyEntries& entries,
                                        RecordVersion chunk_version,
                                        uint32_t expected_input_format) {
  if (record.version != static_cast<uint32_t>(chunk_version)) {
    return RejectReason::kVersionMismatch;
  }
  if (record.input_format != expected_input_format) {
    return RejectReason::kUnexpectedInputFormat;
  }
  if (auto reason = CheckProbabilities(record, entries)) return reason;
  if (HasNanField(record)) return RejectReason::kNanField;
  if (!InRange(record.best_q, -1.0f, 1.0f)) return RejectReason::kBestQRange;
  if (!InRange(record.result_q, -1.0f, 1.0f)) {
    return RejectReason::kResultQRange;
  }
  if (!InRange(record.best_d, 0.0f, 1.0f)) return RejectReason::kBestDRange;
  if (!InRange(record.result_d, 0.0f, 1.0f)) {
    return RejectReason::kResultDRange;
  }
  if (record.plies_left < 0.0f) return RejectReason::kNegativePliesLeft;
  if (!HasV6Fields(chunk_version) && record.result != 1 && record.result != 0 &&
      record.result != -1) {
    return RejectReason::kInvalidResult;
  }
  return std::nullopt;
}

}  // namespace sluice::lc0
