#include "stages/lc0/rescorer/record_checks.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

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

// Probabilities tested at once by IllegalQuads.
constexpr int kBlock = 16;

// A bit for each four of the kBlock probabilities at `p`: set when all
// four are -1 (illegal moves). Four vector compares.
unsigned IllegalQuads(const float* p) {
  using Lanes = uint32_t __attribute__((vector_size(16)));
  constexpr uint32_t kIllegal = std::bit_cast<uint32_t>(-1.0f);
  constexpr Lanes kIllegalLanes = {kIllegal, kIllegal, kIllegal, kIllegal};
  unsigned quads = 0;
  for (int q = 0; q < kBlock / 4; ++q) {
    Lanes lanes;
    std::memcpy(&lanes, p + 4 * q, sizeof(lanes));
    const auto equal = lanes == kIllegalLanes;
    uint64_t halves[2];
    static_assert(sizeof(halves) == sizeof(equal));
    std::memcpy(halves, &equal, sizeof(halves));
    if ((halves[0] & halves[1]) == ~uint64_t{0}) quads |= 1u << q;
  }
  return quads;
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
  // Most entries are -1 (illegal moves): four of them are passed over with
  // one vector test. The legal ones are summed in order, as lc0 sums them,
  // so that the rounding is the same.
  constexpr unsigned kAllQuads = (1u << (kBlock / 4)) - 1;
  float sum = 0;
  for (int block = 0; block < kPolicySize; block += kBlock) {
    const int end = std::min(block + kBlock, kPolicySize);
    const unsigned illegal_quads =
        end - block == kBlock ? IllegalQuads(&record.probabilities[block]) : 0;
    if (illegal_quads == kAllQuads) continue;
    for (int quad = block; quad < end; quad += 4) {
      if (illegal_quads & (1u << ((quad - block) / 4))) continue;
      for (int i = quad; i < std::min(quad + 4, end); ++i) {
        const float p = record.probabilities[i];
        if (std::isnan(p) || p == -1.0f) continue;
        if (!In(p, 0, 1)) return RangeViolation(index, "probabilities");
        sum += p;
      }
    }
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
