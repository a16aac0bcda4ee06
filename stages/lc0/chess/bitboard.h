// Bitboards of the chess board: a uint64_t with bit `square` set for each
// occupied square, a1 = 0, b1 = 1, ..., h1 = 7, a2 = 8, ..., h8 = 63; the
// attack sets of each piece; and the symmetries of the board that lc0's
// training data uses.
//
//   Bitboard occupied = SquareBit(Square(4, 0)) | SquareBit(Square(4, 7));
//   Bitboard rook = RookAttacks(Square(0, 0), occupied);  // a-file, rank 1
#ifndef SLUICE_STAGES_LC0_CHESS_BITBOARD_H_
#define SLUICE_STAGES_LC0_CHESS_BITBOARD_H_

#include <bit>
#include <cstdint>

namespace sluice::lc0::chess {

using Bitboard = uint64_t;

inline constexpr int Square(int file, int rank) { return rank * 8 + file; }
inline constexpr int FileOf(int square) { return square & 7; }
inline constexpr int RankOf(int square) { return square >> 3; }
inline constexpr Bitboard SquareBit(int square) {
  return Bitboard{1} << square;
}

inline constexpr Bitboard kRank1 = 0xFFull;
inline constexpr Bitboard kRank8 = kRank1 << 56;

inline int PopCount(Bitboard b) { return std::popcount(b); }
// The lowest set square; `b` must not be empty.
inline int LowestSquare(Bitboard b) { return std::countr_zero(b); }
// Removes and returns the lowest set square; `b` must not be empty.
inline int PopLowestSquare(Bitboard& b) {
  const int square = std::countr_zero(b);
  b &= b - 1;
  return square;
}

// Rank r goes to rank 7 - r (a1 <-> a8).
inline Bitboard MirrorRanks(Bitboard b) { return __builtin_bswap64(b); }
// File f goes to file 7 - f (a1 <-> h1).
Bitboard FlipFiles(Bitboard b);
// Reflection in the a8-h1 diagonal: (file f, rank r) goes to
// (file 7 - r, rank 7 - f).
Bitboard TransposeAntiDiagonal(Bitboard b);

Bitboard KnightAttacks(int square);
Bitboard KingAttacks(int square);
// The squares a pawn of colour `black` (false: white) on `square` attacks.
Bitboard PawnAttacks(bool black, int square);
Bitboard RookAttacks(int square, Bitboard occupied);
Bitboard BishopAttacks(int square, Bitboard occupied);
inline Bitboard QueenAttacks(int square, Bitboard occupied) {
  return RookAttacks(square, occupied) | BishopAttacks(square, occupied);
}
// The squares strictly between two squares on one line (rank, file or
// diagonal); empty when they share none.
Bitboard Between(int a, int b);

}  // namespace sluice::lc0::chess

#endif  // SLUICE_STAGES_LC0_CHESS_BITBOARD_H_
