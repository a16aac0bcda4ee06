// The policy steps of lc0's rescorer (stages/lc0/rescorer/SPEC.md section 5):
// an additive offset, a DTZ boost of the fastest winning moves of
// tablebase positions, a temperature, then renormalisation. Single
// precision throughout, summed in index order, as lc0.
#ifndef SLUICE_STAGES_LC0_RESCORER_POLICY_ADJUSTMENT_H_
#define SLUICE_STAGES_LC0_RESCORER_POLICY_ADJUSTMENT_H_

#include <span>

#include "stages/lc0/chess/syzygy_tablebase.h"
#include "stages/lc0/format/training_record.h"
#include "stages/lc0/rescorer/game_replay.h"
#include "stages/lc0/rescorer/rescore_options.h"

namespace sluice::lc0::rescorer {

// True when the options change policies at all (temperature 1, offset 0
// and boost 0 leave them bit for bit).
bool AdjustsPolicy(const RescoreOptions& options);

// For every record: each legal entry p (>= 0, not NaN) becomes
// max(0, p + offset + boost share) ^ (1 / temperature), then all are
// divided by their sum. The boost (split evenly) goes to the winning moves
// of minimal DTZ of a tablebase position (ranked as if it had repeated).
void AdjustPolicies(const GameReplay& replay,
                    const chess::SyzygyTablebase& tablebase,
                    const RescoreOptions& options,
                    std::span<V6TrainingRecord> records, RescoreCounts* counts);

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_POLICY_ADJUSTMENT_H_
