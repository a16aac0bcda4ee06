// A chess position and its legal moves: piece bitboards, side to move,
// castling rights (the file of each castling rook, so Chess960 starts work
// too), the en-passant square (set, as in lc0, only when a pawn could
// capture there), the fifty-move counter and the game ply.
// Moves are played with the usual rules; the repetition count is the
// caller's (position_history.h).
//
//   absl::StatusOr<Position> start = Position::FromFen(kStartFen);
//   for (const Move& move : start->LegalMoves()) {
//     Position next = start->AfterMove(move);
//   }
#ifndef SLUICE_STAGES_LC0_CHESS_POSITION_H_
#define SLUICE_STAGES_LC0_CHESS_POSITION_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "stages/lc0/chess/bitboard.h"

namespace sluice::lc0::chess {

inline constexpr std::string_view kStartFen =
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

enum Color : uint8_t { kWhite = 0, kBlack = 1 };
inline Color Opponent(Color c) { return static_cast<Color>(c ^ 1); }

enum PieceType : uint8_t { kPawn, kKnight, kBishop, kRook, kQueen, kKing };
inline constexpr int kPieceTypes = 6;

enum CastlingSide : uint8_t { kQueenside = 0, kKingside = 1 };

// A move. Castling is "the king takes its own rook": `to` is the rook's
// square (lc0's encoding, which also covers Chess960).
struct Move {
  enum class Kind : uint8_t { kNormal, kPromotion, kCastling, kEnPassant };
  uint8_t from = 0;
  uint8_t to = 0;
  Kind kind = Kind::kNormal;
  // The new piece of a promotion (knight to queen); kPawn otherwise.
  PieceType promotion = kPawn;

  bool operator==(const Move&) const = default;
  // Long algebraic notation ("e2e4", "a7a8q"); castling as king to rook.
  std::string ToUci() const;
};

// Up to 256 moves (a legal position has at most 218).
class MoveList {
 public:
  void push_back(const Move& move) { moves_[size_++] = move; }
  int size() const { return size_; }
  const Move& operator[](int i) const { return moves_[i]; }
  const Move* begin() const { return moves_.data(); }
  const Move* end() const { return moves_.data() + size_; }

 private:
  std::array<Move, 256> moves_;
  int size_ = 0;
};

class Position {
 public:
  // An empty board, white to move, no rights.
  Position() = default;

  // Parses Forsyth-Edwards notation (castling as KQkq, or rook files
  // A-H / a-h). Errors: InvalidArgument naming the bad field.
  static absl::StatusOr<Position> FromFen(std::string_view fen);
  std::string Fen() const;

  // Board setup; Put requires an empty square.
  void Put(Color color, PieceType type, int square);
  void set_side_to_move(Color color) { side_to_move_ = color; }
  // The file of the rook that may castle on `side` (-1: no right).
  void set_castling_rook_file(Color color, CastlingSide side, int file) {
    castling_rook_file_[color][side] = static_cast<int8_t>(file);
  }
  // The square a pawn capturing en passant moves to (-1: none).
  void set_en_passant(int square) { en_passant_ = static_cast<int8_t>(square); }
  void set_rule50(int plies) { rule50_ = plies; }
  void set_game_ply(int ply) { game_ply_ = ply; }

  Bitboard pieces(Color color) const { return by_color_[color]; }
  Bitboard pieces(PieceType type) const { return by_type_[type]; }
  Bitboard pieces(Color color, PieceType type) const {
    return by_color_[color] & by_type_[type];
  }
  Bitboard occupied() const { return by_color_[0] | by_color_[1]; }
  int piece_count() const { return PopCount(occupied()); }
  Color side_to_move() const { return side_to_move_; }
  int castling_rook_file(Color color, CastlingSide side) const {
    return castling_rook_file_[color][side];
  }
  // Whether either side keeps any castling right.
  bool has_castling_rights() const;
  int en_passant() const { return en_passant_; }
  int rule50() const { return rule50_; }
  int game_ply() const { return game_ply_; }

  // The type of the piece on `square`, or -1 when it is empty.
  int PieceTypeAt(int square) const;
  // The king square of `color`, or -1 when it has none.
  int KingSquare(Color color) const;
  bool IsAttacked(int square, Color by) const;
  bool InCheck() const;

  MoveList LegalMoves() const;
  bool IsLegal(const Move& move) const;
  // A capture or a pawn move (resets the fifty-move counter).
  bool IsZeroing(const Move& move) const;
  // The position after `move`, which must be legal or at least
  // pseudo-legal (a legality filter calls it on pseudo-legal moves).
  Position AfterMove(const Move& move) const;

  // Same pieces, side to move, castling rights and en-passant square (the
  // identity of repetitions; the counters are not compared).
  bool SameBoard(const Position& other) const;

 private:
  void GeneratePseudoLegal(MoveList& moves) const;
  void AddCastling(CastlingSide side, MoveList& moves) const;
  void Remove(int square);

  std::array<Bitboard, 2> by_color_{};
  std::array<Bitboard, kPieceTypes> by_type_{};
  Color side_to_move_ = kWhite;
  std::array<std::array<int8_t, 2>, 2> castling_rook_file_{
      {{-1, -1}, {-1, -1}}};
  int8_t en_passant_ = -1;
  int rule50_ = 0;
  int game_ply_ = 0;
};

}  // namespace sluice::lc0::chess

#endif  // SLUICE_STAGES_LC0_CHESS_POSITION_H_
