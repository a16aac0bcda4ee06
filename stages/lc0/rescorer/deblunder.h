// lc0's deblunder (stages/lc0/rescorer/SPEC.md section 7): walking back from
// the last position before tablebase range, a move whose value fell short of
// the best move's by more than the threshold (a blunder made on purpose
// for exploration), or a missed proven win, or a move into a proven loss,
// replaces the game result seen from there on back by the best move's
// value (blended over `width` around the threshold).
#ifndef SLUICE_STAGES_LC0_RESCORER_DEBLUNDER_H_
#define SLUICE_STAGES_LC0_RESCORER_DEBLUNDER_H_

#include <span>

#include "stages/lc0/format/training_record.h"
#include "stages/lc0/rescorer/game_probes.h"
#include "stages/lc0/rescorer/rescore_options.h"

namespace sluice::lc0::rescorer {

// Rewrites result_q, result_d and plies_left as lc0 does. Nothing happens
// when the last record has no visits (data without search values).
void Deblunder(GameProbes& probes, const RescoreOptions& options,
               std::span<V6TrainingRecord> records, RescoreCounts* counts);

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_DEBLUNDER_H_
