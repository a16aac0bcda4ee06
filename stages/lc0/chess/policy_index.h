// lc0's policy indices: the place of a move in the network's fixed list of
// 1858 moves, seen from the side to move. The list holds, for each origin
// square a1, b1, ..., h8, the queen-line and knight destinations in square
// order (1792 moves), then the promotions to queen, rook and bishop from
// the 7th rank (66); a knight promotion uses its plain from-to entry.
// Castling is the king taking its own rook (e1h1).
//
// Canonical input formats store a transform in invariance_info (bit 0:
// flip files, bit 1: mirror ranks, bit 2: transpose). lc0 maps move squares
// by reversing ranks once when the mirror or transpose bit is set and files
// once when the flip or transpose bit is set: with the transpose bit this
// is a half turn, not the diagonal transpose of the planes. Data lc0
// writes follows that mapping, so this does too.
//
//   int index = PolicyIndex(move, /*black_to_move=*/false, /*transform=*/0);
#ifndef SLUICE_STAGES_LC0_CHESS_POLICY_INDEX_H_
#define SLUICE_STAGES_LC0_CHESS_POLICY_INDEX_H_

#include <string>

#include "stages/lc0/chess/position.h"

namespace sluice::lc0::chess {

inline constexpr int kPolicyMoves = 1858;

// The index of `move` (absolute squares) played by black when
// `black_to_move`, under canonical `transform` (0-7); -1 when the move has
// no entry (never for a legal move).
int PolicyIndex(const Move& move, bool black_to_move, int transform);

// The move text of entry `index` in the side to move's view ("a1b1",
// "a7a8q"), for tests and messages.
std::string PolicyMoveName(int index);

}  // namespace sluice::lc0::chess

#endif  // SLUICE_STAGES_LC0_CHESS_POLICY_INDEX_H_
