#include "stages/lc0/chess/bitboard.h"

#include <array>

namespace sluice::lc0::chess {
namespace {

// The eight ray directions as (file step, rank step); the first four
// increase the square index, the last four decrease it.
constexpr int kRays[8][2] = {{1, 0},  {0, 1},  {1, 1},   {-1, 1},
                             {-1, 0}, {0, -1}, {-1, -1}, {1, -1}};

struct Tables {
  std::array<Bitboard, 64> knight{};
  std::array<Bitboard, 64> king{};
  std::array<std::array<Bitboard, 64>, 2> pawn{};
  std::array<std::array<Bitboard, 64>, 8> ray{};
  std::array<std::array<Bitboard, 64>, 64> between{};
};

bool OnBoard(int file, int rank) {
  return file >= 0 && file < 8 && rank >= 0 && rank < 8;
}

Bitboard Steps(int square, const int (*steps)[2], int count) {
  Bitboard result = 0;
  for (int i = 0; i < count; ++i) {
    const int file = FileOf(square) + steps[i][0];
    const int rank = RankOf(square) + steps[i][1];
    if (OnBoard(file, rank)) result |= SquareBit(Square(file, rank));
  }
  return result;
}

Tables MakeTables() {
  constexpr int kKnight[8][2] = {{1, 2},   {2, 1},   {2, -1}, {1, -2},
                                 {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
  constexpr int kWhitePawn[2][2] = {{-1, 1}, {1, 1}};
  constexpr int kBlackPawn[2][2] = {{-1, -1}, {1, -1}};
  Tables t;
  for (int square = 0; square < 64; ++square) {
    t.knight[square] = Steps(square, kKnight, 8);
    t.king[square] = Steps(square, kRays, 8);
    t.pawn[0][square] = Steps(square, kWhitePawn, 2);
    t.pawn[1][square] = Steps(square, kBlackPawn, 2);
    for (int dir = 0; dir < 8; ++dir) {
      Bitboard ray = 0;
      int file = FileOf(square) + kRays[dir][0];
      int rank = RankOf(square) + kRays[dir][1];
      while (OnBoard(file, rank)) {
        const int to = Square(file, rank);
        t.between[square][to] = ray;
        ray |= SquareBit(to);
        file += kRays[dir][0];
        rank += kRays[dir][1];
      }
      t.ray[dir][square] = ray;
    }
  }
  return t;
}

const Tables& GetTables() {
  static const Tables tables = MakeTables();
  return tables;
}

// Attacks along the four rays `dirs`, each stopped by its first occupied
// square (included).
Bitboard SlidingAttacks(int square, Bitboard occupied, const int (&dirs)[4]) {
  const Tables& t = GetTables();
  Bitboard attacks = 0;
  for (const int dir : dirs) {
    const Bitboard ray = t.ray[dir][square];
    const Bitboard blockers = ray & occupied;
    if (blockers == 0) {
      attacks |= ray;
      continue;
    }
    const int blocker =
        dir < 4 ? LowestSquare(blockers) : 63 - std::countl_zero(blockers);
    attacks |= ray & ~t.ray[dir][blocker];
  }
  return attacks;
}

}  // namespace

Bitboard FlipFiles(Bitboard b) {
  b = ((b >> 1) & 0x5555555555555555ull) | ((b & 0x5555555555555555ull) << 1);
  b = ((b >> 2) & 0x3333333333333333ull) | ((b & 0x3333333333333333ull) << 2);
  b = ((b >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((b & 0x0F0F0F0F0F0F0F0Full) << 4);
  return b;
}

Bitboard TransposeAntiDiagonal(Bitboard b) {
  Bitboard result = 0;
  while (b != 0) {
    const int square = PopLowestSquare(b);
    result |= SquareBit(Square(7 - RankOf(square), 7 - FileOf(square)));
  }
  return result;
}

Bitboard KnightAttacks(int square) { return GetTables().knight[square]; }
Bitboard KingAttacks(int square) { return GetTables().king[square]; }
Bitboard PawnAttacks(bool black, int square) {
  return GetTables().pawn[black][square];
}

// Rays 0, 1, 4, 5 are the lines; 2, 3, 6, 7 the diagonals.
Bitboard RookAttacks(int square, Bitboard occupied) {
  static constexpr int kLines[4] = {0, 1, 4, 5};
  return SlidingAttacks(square, occupied, kLines);
}

Bitboard BishopAttacks(int square, Bitboard occupied) {
  static constexpr int kDiagonals[4] = {2, 3, 6, 7};
  return SlidingAttacks(square, occupied, kDiagonals);
}

Bitboard Between(int a, int b) { return GetTables().between[a][b]; }

}  // namespace sluice::lc0::chess
