#include "stages/lc0/rescorer/policy_adjustment.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "stages/lc0/chess/policy_index.h"
#include "stages/lc0/rescorer/record_planes.h"

namespace sluice::lc0::rescorer {
namespace {

// The policy indices of the winning moves of minimal DTZ of `position`,
// or none.
std::vector<int> BoostedIndices(const chess::Position& position,
                                const chess::SyzygyTablebase& tablebase,
                                int transform) {
  std::vector<int> indices;
  if (!tablebase.CanProbe(position)) return indices;
  thread_local std::vector<chess::RankedMove> ranked;
  if (!tablebase.RankRootMoves(position, /*has_repeated=*/true, &ranked) ||
      ranked.empty()) {
    return indices;
  }
  int best = ranked[0].rank;
  for (const chess::RankedMove& m : ranked) best = std::max(best, m.rank);
  if (best <= 1) return indices;
  const bool black = position.side_to_move() == chess::kBlack;
  for (const chess::RankedMove& m : ranked) {
    if (m.rank == best) {
      indices.push_back(chess::PolicyIndex(m.move, black, transform));
    }
  }
  return indices;
}

}  // namespace

bool AdjustsPolicy(const RescoreOptions& options) {
  return options.temperature != 1.0f || options.dist_offset != 0.0f ||
         options.dtz_policy_boost != 0.0f;
}

void AdjustPolicies(const GameReplay& replay,
                    const chess::SyzygyTablebase& tablebase,
                    const RescoreOptions& options,
                    std::span<V6TrainingRecord> records,
                    RescoreCounts* counts) {
  const float exponent = 1.0f / options.temperature;
  for (size_t k = 0; k < records.size(); ++k) {
    V6TrainingRecord& record = records[k];
    std::vector<int> boosted;
    if (options.dtz_policy_boost > 0) {
      boosted = BoostedIndices(replay.positions[k], tablebase,
                               RecordTransform(record));
    }
    const float share =
        boosted.empty()
            ? 0.0f
            : options.dtz_policy_boost / static_cast<float>(boosted.size());
    float sum = 0;
    for (int j = 0; j < kPolicySize; ++j) {
      float& p = record.probabilities[j];
      if (!(p >= 0)) continue;
      const bool boost =
          std::find(boosted.begin(), boosted.end(), j) != boosted.end();
      counts->boosted_entries += boost;
      p = std::max(0.0f, p + (options.dist_offset + (boost ? share : 0.0f)));
      p = std::pow(p, exponent);
      sum += p;
    }
    for (float& p : record.probabilities) {
      if (p >= 0) p /= sum;
    }
  }
}

}  // namespace sluice::lc0::rescorer
