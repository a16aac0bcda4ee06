#include "stages/lc0/rescorer/record_checks.h"

#include <bit>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "stages/lc0/rescorer/record_planes.h"

namespace sluice::lc0::rescorer {
namespace {

Rejection RangeViolation(int index, std::string_view field) {
  return Rejection{.reason = "range_violation",
                   .detail = absl::StrCat("record ", index, ": ",
                                          std::string(field), " out of range")};
}

bool In(float value, float low, float high) {
  return value >= low && value <= high;
}

// The probability lc0 reads at `index` (<= 1858): entry 1858 lies past
// the policy, on the first plane's bytes, as in lc0's struct.
float ProbabilityAt(const V6TrainingRecord& record, int index) {
  float value;
  std::memcpy(&value,
              reinterpret_cast<const char*>(&record) +
                  offsetof(V6TrainingRecord, probabilities) +
                  sizeof(float) * index,
              sizeof(value));
  return value;
}

// Probabilities tested at once by ListedMask.
constexpr int kBlock = 16;

// A bit for each of the kBlock probabilities at `p` that is not -1 (the
// mark of an illegal move): four vector compares where the CPU has SSE2.
uint32_t ListedMask(const float* p) {
#if defined(__SSE2__)
  const __m128 illegal = _mm_set1_ps(-1.0f);
  uint32_t mask = 0;
  for (int quad = 0; quad < kBlock / 4; ++quad) {
    const __m128 values = _mm_loadu_ps(p + 4 * quad);
    mask |=
        static_cast<uint32_t>(_mm_movemask_ps(_mm_cmpneq_ps(values, illegal)))
        << (4 * quad);
  }
  return mask;
#else
  uint32_t mask = 0;
  for (int i = 0; i < kBlock; ++i) {
    if (!(p[i] == -1.0f)) mask |= 1u << i;
  }
  return mask;
#endif
}

}  // namespace

std::optional<Rejection> CheckRecord(const V6TrainingRecord& record,
                                     int index) {
  const uint32_t format = record.input_format;
  if (format != 1 && format != 2 && format != 3 && format != 4 && format != 5 &&
      format != 132 && format != 133) {
    return Rejection{
        .reason = "invalid_input_format",
        .detail = absl::StrCat("record ", index, ": input_format ", format)};
  }
  if (!In(record.best_d, 0, 1)) return RangeViolation(index, "best_d");
  if (!In(record.root_d, 0, 1)) return RangeViolation(index, "root_d");
  if (!In(record.best_q, -1, 1)) return RangeViolation(index, "best_q");
  if (!In(record.root_q, -1, 1)) return RangeViolation(index, "root_q");
  if (!(record.root_m >= 0)) return RangeViolation(index, "root_m");
  if (!(record.best_m >= 0)) return RangeViolation(index, "best_m");
  if (!(record.plies_left >= 0)) return RangeViolation(index, "plies_left");
  const uint8_t castling[4] = {record.castling_us_ooo, record.castling_us_oo,
                               record.castling_them_ooo,
                               record.castling_them_oo};
  for (const uint8_t c : castling) {
    if (format == 1 ? c > 1 : std::popcount(c) > 1) {
      return RangeViolation(index, "castling");
    }
  }
  if (IsCanonicalFormat(format)
          ? std::popcount(record.side_to_move_or_enpassant) > 1
          : record.side_to_move_or_enpassant > 1) {
    return RangeViolation(index, "side_to_move_or_enpassant");
  }
  if (!In(record.result_q, -1, 1)) return RangeViolation(index, "result_q");
  if (!(record.result_d >= 0)) return RangeViolation(index, "result_d");
  if (record.rule50_count > 100) return RangeViolation(index, "rule50_count");
  // Most entries are -1 (illegal moves): a block of them is passed over
  // with a few vector compares, and only the others are visited, in order.
  // They are summed as lc0 sums them, so that the rounding is the same.
  float sum = 0;
  auto add = [&](float p) {
    if (std::isnan(p)) return true;
    if (!In(p, 0, 1)) return false;
    sum += p;
    return true;
  };
  int block = 0;
  for (; block + kBlock <= kPolicySize; block += kBlock) {
    for (uint32_t listed = ListedMask(&record.probabilities[block]);
         listed != 0; listed &= listed - 1) {
      if (!add(record.probabilities[block + std::countr_zero(listed)])) {
        return RangeViolation(index, "probabilities");
      }
    }
  }
  for (int i = block; i < kPolicySize; ++i) {
    const float p = record.probabilities[i];
    if (p != -1.0f && !add(p)) return RangeViolation(index, "probabilities");
  }
  if (!In(sum, 0.99f, 1.01f)) {
    return Rejection{.reason = "probability_sum_error",
                     .detail = absl::StrCat("record ", index,
                                            ": probabilities sum to ", sum)};
  }
  if (record.best_idx > kPolicySize) return RangeViolation(index, "best_idx");
  if (record.played_idx > kPolicySize) {
    return RangeViolation(index, "played_idx");
  }
  if (record.visits > 0 && (ProbabilityAt(record, record.best_idx) < 0 ||
                            ProbabilityAt(record, record.played_idx) < 0)) {
    return RangeViolation(index, "probability of the best or played move");
  }
  if (!In(record.played_q, -1, 1)) return RangeViolation(index, "played_q");
  if (!In(record.played_d, 0, 1)) return RangeViolation(index, "played_d");
  if (!(record.played_m >= 0)) return RangeViolation(index, "played_m");
  if (!std::isnan(record.orig_q) && !In(record.orig_q, -1, 1)) {
    return RangeViolation(index, "orig_q");
  }
  if (!std::isnan(record.orig_d) && !In(record.orig_d, 0, 1)) {
    return RangeViolation(index, "orig_d");
  }
  if (!std::isnan(record.orig_m) && !(record.orig_m >= 0)) {
    return RangeViolation(index, "orig_m");
  }
  return std::nullopt;
}

std::optional<Rejection> ReadResult(const V6TrainingRecord& record, int index,
                                    int* result) {
  const float q = record.result_q;
  if (q != -1.0f && q != 0.0f && q != 1.0f) {
    return Rejection{.reason = "range_violation",
                     .detail = absl::StrCat("record ", index, ": result_q ", q,
                                            " is not -1, 0 or 1")};
  }
  *result = static_cast<int>(q);
  return std::nullopt;
}

}  // namespace sluice::lc0::rescorer
