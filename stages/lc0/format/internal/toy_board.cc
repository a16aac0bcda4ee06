#include "stages/lc0/format/internal/toy_board.h"

#include <cmath>
#include <cstdlib>

namespace sluice::lc0::internal {
namespace {

constexpr int kKnightSteps[8][2] = {{1, 2},   {2, 1},   {2, -1}, {1, -2},
                                    {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
constexpr int kDiagonals[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
constexpr int kLines[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
constexpr int kAllDirections[8][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1},
                                      {1, 0}, {-1, 0}, {0, 1},  {0, -1}};

int Sign(int x) { return (x > 0) - (x < 0); }

}  // namespace

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int Rng::Uniform(int lo, int hi) {
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int>(
                  (static_cast<unsigned __int128>(Next()) * span) >> 64);
}

double Rng::Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

double Rng::Normal() {
  const double u = 1.0 - Unit();  // (0, 1]
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * Unit());
}

ToyBoard::ToyBoard() {
  squares_.fill(0);
  constexpr int8_t kBackRank[8] = {kRook, kKnight, kBishop, kQueen,
                                   kKing, kBishop, kKnight, kRook};
  for (int file = 0; file < 8; ++file) {
    squares_[file] = kBackRank[file];
    squares_[8 + file] = kPawn;
    squares_[48 + file] = -kPawn;
    squares_[56 + file] = static_cast<int8_t>(-kBackRank[file]);
  }
}

void ToyBoard::AddSlides(int from, const int (*dirs)[2], int ndirs, bool slide,
                         std::vector<ToyMove>& moves) const {
  const int own = black_to_move_ ? -1 : 1;
  for (int d = 0; d < ndirs; ++d) {
    int file = from % 8, rank = from / 8;
    while (true) {
      file += dirs[d][0];
      rank += dirs[d][1];
      if (file < 0 || file > 7 || rank < 0 || rank > 7) break;
      const int to = rank * 8 + file;
      const int target = squares_[to];
      if (target == 0) {
        moves.push_back({static_cast<int8_t>(from), static_cast<int8_t>(to)});
        if (slide) continue;
      } else if (Sign(target) != own && std::abs(target) != kKing) {
        moves.push_back({static_cast<int8_t>(from), static_cast<int8_t>(to)});
      }
      break;
    }
  }
}

void ToyBoard::AddPawnMoves(int from, std::vector<ToyMove>& moves) const {
  const int own = black_to_move_ ? -1 : 1;
  const int file = from % 8, rank = from / 8, next = rank + own;
  if (next < 0 || next > 7) return;
  auto add = [&](int to) {
    moves.push_back({static_cast<int8_t>(from), static_cast<int8_t>(to)});
  };
  if (squares_[next * 8 + file] == 0) {
    add(next * 8 + file);
    const int start = own > 0 ? 1 : 6;
    if (rank == start && squares_[(next + own) * 8 + file] == 0) {
      add((next + own) * 8 + file);
    }
  }
  const int en_passant_rank = own > 0 ? 4 : 3;
  for (int side : {-1, 1}) {
    const int f = file + side;
    if (f < 0 || f > 7) continue;
    const int target = squares_[next * 8 + f];
    if ((target != 0 && Sign(target) != own && std::abs(target) != kKing) ||
        (target == 0 && f == en_passant_file_ && rank == en_passant_rank)) {
      add(next * 8 + f);
    }
  }
}

std::vector<ToyMove> ToyBoard::Moves() const {
  std::vector<ToyMove> moves;
  const int own = black_to_move_ ? -1 : 1;
  for (int from = 0; from < 64; ++from) {
    const int piece = squares_[from];
    if (Sign(piece) != own) continue;
    switch (std::abs(piece)) {
      case kPawn:
        AddPawnMoves(from, moves);
        break;
      case kKnight:
        AddSlides(from, kKnightSteps, 8, false, moves);
        break;
      case kBishop:
        AddSlides(from, kDiagonals, 4, true, moves);
        break;
      case kRook:
        AddSlides(from, kLines, 4, true, moves);
        break;
      case kQueen:
        AddSlides(from, kAllDirections, 8, true, moves);
        break;
      case kKing:
        AddSlides(from, kAllDirections, 8, false, moves);
        break;
    }
  }
  // Castling, ignoring checks: king and rook home, squares between empty.
  const int base = black_to_move_ ? 56 : 0;
  const int rights = black_to_move_ ? 2 : 0;
  if (squares_[base + 4] == own * kKing) {
    if (castling_[rights + 1] && squares_[base + 7] == own * kRook &&
        !squares_[base + 5] && !squares_[base + 6]) {
      moves.push_back(
          {static_cast<int8_t>(base + 4), static_cast<int8_t>(base + 6)});
    }
    if (castling_[rights] && squares_[base] == own * kRook &&
        !squares_[base + 1] && !squares_[base + 2] && !squares_[base + 3]) {
      moves.push_back(
          {static_cast<int8_t>(base + 4), static_cast<int8_t>(base + 2)});
    }
  }
  return moves;
}

bool ToyBoard::IsCapture(ToyMove move) const {
  return squares_[move.to] != 0 || (std::abs(squares_[move.from]) == kPawn &&
                                    move.from % 8 != move.to % 8);
}

void ToyBoard::Play(ToyMove move) {
  const int piece = squares_[move.from];
  const int own = Sign(piece);
  const bool pawn = std::abs(piece) == kPawn;
  const bool capture = IsCapture(move);
  if (pawn && capture && squares_[move.to] == 0) {  // en passant
    squares_[move.to - own * 8] = 0;
  }
  if (std::abs(piece) == kKing && std::abs(move.to - move.from) == 2) {
    const bool king_side = move.to > move.from;
    const int rook_from = king_side ? move.from + 3 : move.from - 4;
    const int rook_to = king_side ? move.from + 1 : move.from - 1;
    squares_[rook_to] = squares_[rook_from];
    squares_[rook_from] = 0;
  }
  squares_[move.to] = static_cast<int8_t>(piece);
  squares_[move.from] = 0;
  const int last_rank = own > 0 ? 7 : 0;
  if (pawn && move.to / 8 == last_rank) {
    squares_[move.to] = static_cast<int8_t>(own * kQueen);
  }
  // Rights vanish when the king moves or a rook leaves or loses its corner.
  if (std::abs(piece) == kKing) {
    castling_[own > 0 ? 0 : 2] = castling_[own > 0 ? 1 : 3] = false;
  }
  constexpr int kCorners[4] = {0, 7, 56, 63};
  for (int i = 0; i < 4; ++i) {
    if (move.from == kCorners[i] || move.to == kCorners[i]) {
      castling_[i] = false;
    }
  }
  en_passant_file_ =
      pawn && std::abs(move.to - move.from) == 16 ? move.from % 8 : -1;
  rule50_ = pawn || capture ? 0 : rule50_ + 1;
  black_to_move_ = !black_to_move_;
}

void ToyBoard::PassTurn() {
  en_passant_file_ = -1;
  ++rule50_;
  black_to_move_ = !black_to_move_;
}

std::string ToyBoard::Key() const {
  std::string key(squares_.begin(), squares_.end());
  key.push_back(black_to_move_ ? 'b' : 'w');
  return key;
}

}  // namespace sluice::lc0::internal
