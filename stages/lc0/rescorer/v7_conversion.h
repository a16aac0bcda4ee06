// V6 -> V7 as lczero-training's loader does it (stages/lc0/rescorer/SPEC.md
// section 9): q_st/d_st, a backward exponential moving average of the
// search's root_q/root_d over the game (weight theta on the later value),
// and the played_idx of the next two records.
#ifndef SLUICE_STAGES_LC0_RESCORER_V7_CONVERSION_H_
#define SLUICE_STAGES_LC0_RESCORER_V7_CONVERSION_H_

#include <span>
#include <vector>

#include "stages/lc0/format/training_record.h"

namespace sluice::lc0::rescorer {

// The V7 tails of a game's records, in order.
std::vector<V7Tail> ComputeV7Tails(std::span<const V6TrainingRecord> records,
                                   float theta);

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_V7_CONVERSION_H_
