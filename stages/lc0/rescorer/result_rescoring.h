// The tablebase steps of lc0's rescorer on a replayed game
// (stages/lc0/rescorer/SPEC.md sections 3 and 6): the game result (result_q,
// result_d) from WDL probes in two passes, and plies_left from DTZ probes.
#ifndef SLUICE_STAGES_LC0_RESCORER_RESULT_RESCORING_H_
#define SLUICE_STAGES_LC0_RESCORER_RESULT_RESCORING_H_

#include <optional>
#include <span>

#include "stages/lc0/chess/syzygy_tablebase.h"
#include "stages/lc0/format/training_record.h"
#include "stages/lc0/rescorer/game_probes.h"
#include "stages/lc0/rescorer/rescore_options.h"

namespace sluice::lc0::rescorer {

// Pass 1: every tablebase position reached with rule50 = 0 gives its WDL
// score to itself and, alternating in sign, to the records back to the
// previous such position. Pass 2: every tablebase position with rule50 > 0
// keeps its recorded result only where the tablebase agrees and the
// fifty-move rule cannot intervene (DTZ), takes the tablebase result where
// DTZ proves it reachable in time without repetitions, and is a draw
// otherwise. Record 0 is never probed. Rejects a game whose results read
// are not -1, 0 or 1 (range_violation).
std::optional<Rejection> RescoreResults(GameProbes& probes,
                                        std::span<V6TrainingRecord> records,
                                        RescoreCounts* counts);

// plies_left = N - k for every record k with plies_left 0 (V4-style data).
void FillMissingPliesLeft(std::span<V6TrainingRecord> records);

// plies_left from DTZ for won or lost positions of at most three pieces
// without pawns (KQvK, KRvK): unless every result is a draw, a record k
// whose DTZ fits the fifty-move rule (and has no repetition within it) gets
// plies_left = |dtz|, and when rule50 = 0 every earlier record j gets
// |dtz| + k - j.
void CorrectPliesLeftByDtz(GameProbes& probes,
                           std::span<V6TrainingRecord> records);

// The WDL value lc0 uses: win +1, loss -1, anything else 0.
int WdlScore(chess::Wdl wdl);

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_RESULT_RESCORING_H_
