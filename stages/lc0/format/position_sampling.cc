#include "stages/lc0/format/position_sampling.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace sluice::lc0 {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double UniformDouble(uint64_t seed, uint64_t chunk_hash, uint64_t index) {
  const uint64_t bits =
      SplitMix64(SplitMix64(SplitMix64(seed) ^ chunk_hash) ^ index);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

bool KeepWithProbability(double p, uint64_t seed, uint64_t chunk_hash,
                         uint64_t index) {
  if (p >= 1.0) return true;
  return UniformDouble(seed, chunk_hash, index) < p;  // never for p <= 0
}

std::vector<uint32_t> ChoosePositions(uint64_t seed, uint64_t chunk_hash,
                                      uint32_t positions, uint32_t count) {
  // Selection sampling (Knuth's Algorithm S): position i is kept with
  // probability (still needed) / (still left), which makes every subset of
  // the target size equally likely.
  const uint32_t target = std::min(count, positions);
  std::vector<uint32_t> chosen;
  chosen.reserve(target);
  for (uint32_t i = 0; i < positions && chosen.size() < target; ++i) {
    const double needed = target - chosen.size();
    const double left = positions - i;
    if (UniformDouble(seed, chunk_hash, i) * left < needed) chosen.push_back(i);
  }
  return chosen;
}

absl::StatusOr<DiffFocus> DiffFocus::Create(const DiffFocusParams& params) {
  if (!(params.min >= 0.0 && params.min <= 1.0) || !(params.slope >= 0.0) ||
      !(params.q_weight >= 0.0) || !(params.pol_scale >= 0.0) ||
      !(params.q_weight + params.pol_scale > 0.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid diff focus parameters: min ", params.min, " (needs [0, 1]), ",
        "slope ", params.slope, ", q_weight ", params.q_weight, ", pol_scale ",
        params.pol_scale, " (need >= 0, q_weight + pol_scale > 0)"));
  }
  return DiffFocus(params);
}

double DiffFocus::KeepProbability(const V6TrainingRecord& record) const {
  if (record.version < 6 || std::isnan(record.orig_q) ||
      record.policy_kld == 0.0f) {
    return 1.0;
  }
  const double diff_q = std::abs(static_cast<double>(record.best_q) -
                                 static_cast<double>(record.orig_q));
  const double total = (params_.q_weight * diff_q + record.policy_kld) /
                       (params_.q_weight + params_.pol_scale);
  const double p = params_.min + params_.slope * total;
  return std::isnan(p) ? 1.0 : std::clamp(p, 0.0, 1.0);
}

bool DiffFocus::Keep(const V6TrainingRecord& record, uint64_t seed,
                     uint64_t chunk_hash, uint64_t index) const {
  return KeepWithProbability(KeepProbability(record), seed, chunk_hash, index);
}

}  // namespace sluice::lc0
