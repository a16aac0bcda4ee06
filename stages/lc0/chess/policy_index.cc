#include "stages/lc0/chess/policy_index.h"

#include <array>
#include <cstdint>

namespace sluice::lc0::chess {
namespace {

// index_of[from][to] for plain moves; promotion[pawn file][target file
// offset + 1][queen, rook, bishop] for 7th-to-8th-rank promotions.
struct PolicyTable {
  std::array<std::array<int16_t, 64>, 64> index_of;
  std::array<std::array<std::array<int16_t, 3>, 3>, 8> promotion;
  std::array<std::string, kPolicyMoves> names;
};

std::string SquareText(int square) {
  return {static_cast<char>('a' + FileOf(square)),
          static_cast<char>('1' + RankOf(square))};
}

PolicyTable MakeTable() {
  PolicyTable table;
  for (auto& row : table.index_of) row.fill(-1);
  int next = 0;
  for (int from = 0; from < 64; ++from) {
    const Bitboard destinations = QueenAttacks(from, 0) | KnightAttacks(from);
    Bitboard rest = destinations;
    while (rest != 0) {
      const int to = PopLowestSquare(rest);
      table.index_of[from][to] = static_cast<int16_t>(next);
      table.names[next++] = SquareText(from) + SquareText(to);
    }
  }
  for (int file = 0; file < 8; ++file) {
    for (int offset = -1; offset <= 1; ++offset) {
      auto& entries = table.promotion[file][offset + 1];
      entries.fill(-1);
      const int target = file + offset;
      if (target < 0 || target > 7) continue;
      for (int piece = 0; piece < 3; ++piece) {
        entries[piece] = static_cast<int16_t>(next);
        table.names[next++] = SquareText(Square(file, 6)) +
                              SquareText(Square(target, 7)) + "qrb"[piece];
      }
    }
  }
  return table;
}

const PolicyTable& Table() {
  static const PolicyTable table = MakeTable();
  return table;
}

int MapSquare(int square, bool black_to_move, int transform) {
  int file = FileOf(square);
  int rank = RankOf(square);
  if (black_to_move) rank = 7 - rank;
  if (transform & 0b110) rank = 7 - rank;
  if (transform & 0b101) file = 7 - file;
  return Square(file, rank);
}

}  // namespace

int PolicyIndex(const Move& move, bool black_to_move, int transform) {
  const int from = MapSquare(move.from, black_to_move, transform);
  const int to = MapSquare(move.to, black_to_move, transform);
  const PolicyTable& table = Table();
  if (move.kind == Move::Kind::kPromotion && move.promotion != kKnight) {
    const int offset = FileOf(to) - FileOf(from);
    if (RankOf(from) != 6 || RankOf(to) != 7 || offset < -1 || offset > 1) {
      return -1;
    }
    const int piece = move.promotion == kQueen  ? 0
                      : move.promotion == kRook ? 1
                                                : 2;
    return table.promotion[FileOf(from)][offset + 1][piece];
  }
  return table.index_of[from][to];
}

std::string PolicyMoveName(int index) {
  if (index < 0 || index >= kPolicyMoves) return "";
  return Table().names[index];
}

}  // namespace sluice::lc0::chess
