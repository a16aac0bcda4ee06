#include "stages/lc0/rescorer/deblunder.h"

#include <algorithm>

namespace sluice::lc0::rescorer {

void Deblunder(GameProbes& probes, const RescoreOptions& options,
               std::span<V6TrainingRecord> records, RescoreCounts* counts) {
  const int n = static_cast<int>(records.size());
  if (records[n - 1].visits == 0) return;
  // Start before the first position in tablebase range.
  int start = n - 1;
  for (int k = 1; k < n; ++k) {
    if (probes.CanProbe(k)) {
      start = k - 1;
      break;
    }
  }
  const float threshold = options.deblunder_threshold;
  const float width = options.deblunder_width;
  const double trigger =
      static_cast<double>(threshold) - static_cast<double>(width) / 2;
  // The running target, taken from the last record whatever `start` is.
  float q = records[n - 1].result_q;
  float d = records[n - 1].result_d;
  float m = records[n - 1].plies_left;
  bool started = false;
  for (int k = start; k >= 0; --k) {
    V6TrainingRecord& record = records[k];
    const float best = record.best_q;
    const float played = record.played_q;
    const bool by_threshold = static_cast<double>(best - played) > trigger;
    const bool terminal =
        best > -1 && played < 1 &&
        ((best == 1 && (record.invariance_info & 0x08)) || played == -1);
    if (by_threshold || terminal) {
      float ratio = 1;
      if (width > 0 && !terminal) {
        ratio = std::min(1.0f, (best - played - threshold) / width + 0.5f);
      }
      q = (1 - ratio) * q + ratio * best;
      d = (1 - ratio) * d + ratio * record.best_d;
      m = (1 - ratio) * m + ratio * record.best_m;
      started = true;
      ++counts->blunders;
    }
    if (started) {
      record.result_q = q;
      record.result_d = d;
      record.plies_left = m;
    }
    q = -q;
    m = m + 1;
  }
}

}  // namespace sluice::lc0::rescorer
