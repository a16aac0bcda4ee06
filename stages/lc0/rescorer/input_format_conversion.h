// Re-encodes a replayed game's records in another input format
// (stages/lc0/rescorer/SPEC.md section 10), as lc0's encoder writes them:
// planes from the replayed history (8 steps; none before record 0; canonical
// formats stop at the last zeroing move or castling change), castling and
// side-to-move / en-passant bytes, the canonical transform (the policy
// permuted to match), input_format.
#ifndef SLUICE_STAGES_LC0_RESCORER_INPUT_FORMAT_CONVERSION_H_
#define SLUICE_STAGES_LC0_RESCORER_INPUT_FORMAT_CONVERSION_H_

#include <span>

#include "stages/lc0/chess/position.h"
#include "stages/lc0/format/training_record.h"
#include "stages/lc0/rescorer/game_replay.h"

namespace sluice::lc0::rescorer {

// The input formats records can be converted to.
inline bool IsConvertibleFormat(int format) {
  return format == 1 || format == 3;
}

// The canonical transform lc0 picks for `position` (its side to move's
// view): none with castling rights; a flip to put the king on files e-h;
// without pawns also a mirror to ranks 1-4 and a transpose to below the
// h1-e4 diagonal (on it, whichever orientation has the smaller occupancy).
int ChooseTransform(const chess::Position& position);

// Re-encodes every record of `records` (replayed into `replay`) in
// `format` (IsConvertibleFormat).
void ConvertInputFormat(const GameReplay& replay, int format,
                        std::span<V6TrainingRecord> records);

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_INPUT_FORMAT_CONVERSION_H_
