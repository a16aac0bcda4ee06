// lc0's rescorer's checks of each record of a game (stages/lc0/rescorer/SPEC.md
// 1.3) and of the results it reads. A failure refuses the whole game.
#ifndef SLUICE_STAGES_LC0_RESCORER_RECORD_CHECKS_H_
#define SLUICE_STAGES_LC0_RESCORER_RECORD_CHECKS_H_

#include <optional>

#include "stages/lc0/format/training_record.h"
#include "stages/lc0/rescorer/rescore_options.h"

namespace sluice::lc0::rescorer {

// The checks lc0 makes on record `index`: input_format, the ranges of
// every value field, castling and side-to-move bytes, rule50, the policy
// (entries in [0, 1], -1 or NaN; the others summing to 1 +- 0.01), the
// played and best indices. NaN fails every range but orig_*'s. Reasons:
// invalid_input_format, range_violation, probability_sum_error.
std::optional<Rejection> CheckRecord(const V6TrainingRecord& record, int index);

// The game result of record `index` (-1, 0 or 1), or range_violation when
// result_q is not one of those (a deblundered file read again).
std::optional<Rejection> ReadResult(const V6TrainingRecord& record, int index,
                                    int* result);

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_RECORD_CHECKS_H_
