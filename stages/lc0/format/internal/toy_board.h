// A toy chess board for the data generator: pseudo-legal moves (no check
// rules), captures, castling, en passant and queen promotion; enough for
// piece bitboards that evolve like a real game's. Not a chess engine.
//
//   Rng rng(seed);
//   ToyBoard board;  // the initial position, white to move
//   std::vector<ToyMove> moves = board.Moves();
//   board.Play(moves[rng.Uniform(0, moves.size() - 1)]);
#ifndef SLUICE_STAGES_LC0_FORMAT_INTERNAL_TOY_BOARD_H_
#define SLUICE_STAGES_LC0_FORMAT_INTERNAL_TOY_BOARD_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::lc0::internal {

// A small, fast, deterministic generator (splitmix64): the same seed gives
// the same sequence on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [lo, hi]; requires lo <= hi.
  int Uniform(int lo, int hi);
  // Uniform in [0, 1).
  double Unit();
  bool Chance(double p) { return Unit() < p; }
  // Standard normal.
  double Normal();

 private:
  uint64_t state_;
};

// Piece codes: 0 empty, 1..6 white pawn, knight, bishop, rook, queen, king;
// negative for black.
enum Piece : int8_t { kPawn = 1, kKnight, kBishop, kRook, kQueen, kKing };

struct ToyMove {
  int8_t from = 0;  // square, a1 = 0, h1 = 7, a8 = 56
  int8_t to = 0;
};

// A position plus the state needed to move on from it.
class ToyBoard {
 public:
  ToyBoard();  // the initial position

  // Pseudo-legal moves of the side to move; never captures a king.
  std::vector<ToyMove> Moves() const;
  // True when `move` takes a piece.
  bool IsCapture(ToyMove move) const;
  // Plays `move` (from Moves()); updates castling rights, en passant, the
  // fifty-move counter and the side to move.
  void Play(ToyMove move);
  // Passes the turn (when no move exists).
  void PassTurn();

  int8_t at(int square) const { return squares_[square]; }
  bool black_to_move() const { return black_to_move_; }
  // Castling rights: [white O-O-O, white O-O, black O-O-O, black O-O].
  const std::array<bool, 4>& castling() const { return castling_; }
  // File (0-7) of a pawn that just moved two squares, or -1.
  int en_passant_file() const { return en_passant_file_; }
  int rule50() const { return rule50_; }
  // Pieces and side to move, for repetition detection.
  std::string Key() const;

 private:
  void AddSlides(int from, const int (*dirs)[2], int ndirs, bool slide,
                 std::vector<ToyMove>& moves) const;
  void AddPawnMoves(int from, std::vector<ToyMove>& moves) const;

  std::array<int8_t, 64> squares_;
  bool black_to_move_ = false;
  std::array<bool, 4> castling_ = {true, true, true, true};
  int en_passant_file_ = -1;
  int rule50_ = 0;
};

}  // namespace sluice::lc0::internal

#endif  // SLUICE_STAGES_LC0_FORMAT_INTERNAL_TOY_BOARD_H_
