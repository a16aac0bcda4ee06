// A position as fathom's probing functions take it: bitboards by color and
// piece type, the en passant square (0 for none) and the side to move.
#ifndef SLUICE_STAGES_LC0_CHESS_INTERNAL_FATHOM_BOARD_H_
#define SLUICE_STAGES_LC0_CHESS_INTERNAL_FATHOM_BOARD_H_

#include <cstdint>

#include "stages/lc0/chess/position.h"

namespace sluice::lc0::chess::internal {

struct FathomBoard {
  uint64_t white, black, kings, queens, rooks, bishops, knights, pawns;
  unsigned ep;
  bool turn;  // true: white to move
};

// `position`'s pieces, en passant square and side to move.
inline FathomBoard ToFathomBoard(const Position& position) {
  return FathomBoard{.white = position.pieces(kWhite),
                     .black = position.pieces(kBlack),
                     .kings = position.pieces(kKing),
                     .queens = position.pieces(kQueen),
                     .rooks = position.pieces(kRook),
                     .bishops = position.pieces(kBishop),
                     .knights = position.pieces(kKnight),
                     .pawns = position.pieces(kPawn),
                     .ep = position.en_passant() < 0
                               ? 0u
                               : static_cast<unsigned>(position.en_passant()),
                     .turn = position.side_to_move() == kWhite};
}

}  // namespace sluice::lc0::chess::internal

#endif  // SLUICE_STAGES_LC0_CHESS_INTERNAL_FATHOM_BOARD_H_
