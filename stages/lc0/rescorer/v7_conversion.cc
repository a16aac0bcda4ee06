#include "stages/lc0/rescorer/v7_conversion.h"

#include <algorithm>

namespace sluice::lc0::rescorer {

std::vector<V7Tail> ComputeV7Tails(std::span<const V6TrainingRecord> records,
                                   float theta) {
  const int n = static_cast<int>(records.size());
  const float beta = 1.0f - theta;
  std::vector<V7Tail> tails(n, V7Tail{});
  float q = 0;
  float d = 0;
  for (int k = n - 1; k >= 0; --k) {
    const float sign = k % 2 == 1 ? -1.0f : 1.0f;
    const float x = records[k].root_q * sign;
    if (k == n - 1) {
      q = x;
      d = records[k].root_d;
    } else {
      q = theta * q + beta * x;
      d = theta * d + beta * records[k].root_d;
    }
    V7Tail& tail = tails[k];
    tail.q_st = q * sign;
    tail.d_st = std::max(d, 0.0f);
    tail.opp_played_idx = k + 1 < n ? records[k + 1].played_idx : kNoPlayedIdx;
    tail.next_played_idx = k + 2 < n ? records[k + 2].played_idx : kNoPlayedIdx;
  }
  return tails;
}

}  // namespace sluice::lc0::rescorer
