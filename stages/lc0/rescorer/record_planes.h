// The piece planes of an lc0 training record as bitboards, and the
// canonical transforms of input formats 3 and up.
//
// A record stores 104 planes (8 history steps of 13: our P N B R Q K,
// their P N B R Q K, a repetition plane) in the side to move's view, each
// uint64 with square j at bit j ^ 7 ("mirrored" bytes). Canonical formats
// also apply the transform in invariance_info bits 0-2 (1: flip files,
// 2: mirror ranks, 4: transpose across the a8-h1 diagonal), in that order
// when encoding; decoding undoes them in the reverse order.
//
//   PiecePlanes now = DecodePiecePlanes(record, /*step=*/0);
//   Bitboard our_king = now[kKing];
#ifndef SLUICE_STAGES_LC0_RESCORER_RECORD_PLANES_H_
#define SLUICE_STAGES_LC0_RESCORER_RECORD_PLANES_H_

#include <array>
#include <cstdint>

#include "stages/lc0/chess/bitboard.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0::rescorer {

using chess::Bitboard;

// Our P N B R Q K (0-5), then their P N B R Q K (6-11).
using PiecePlanes = std::array<Bitboard, 12>;
inline constexpr int kTheirs = 6;

// Formats 3, 4, 5, 132 and 133 (canonical: transformed planes, castling
// rook files, en-passant byte).
bool IsCanonicalFormat(uint32_t input_format);
// Formats 4, 5, 132 and 133 (the rule50 plane counts hectoplies).
bool IsHectopliesFormat(uint32_t input_format);

// The transform a record's planes carry: invariance_info bits 0-2 for a
// canonical format, else 0.
int RecordTransform(const V6TrainingRecord& record);

// Stored plane bits <-> squares (the bits of each byte reversed).
inline Bitboard SquaresOfStoredPlane(uint64_t stored) {
  return chess::FlipFiles(stored);
}
inline uint64_t StoredPlaneOfSquares(Bitboard squares) {
  return chess::FlipFiles(squares);
}

// Applies `transform` as lc0's encoder does (flip, mirror, transpose) and
// undoes it (transpose, mirror, flip).
Bitboard ApplyTransform(Bitboard squares, int transform);
Bitboard UndoTransform(Bitboard squares, int transform);

// The 12 piece planes of history step `step` (0-7) of `record`, in its side
// to move's view, transform undone.
PiecePlanes DecodePiecePlanes(const V6TrainingRecord& record, int step);

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_RECORD_PLANES_H_
