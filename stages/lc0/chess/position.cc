#include "stages/lc0/chess/position.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace sluice::lc0::chess {
namespace {

constexpr char kPieceLetters[] = "pnbrqk";

int BackRank(Color color) { return color == kWhite ? 0 : 7; }
int Forward(Color color) { return color == kWhite ? 8 : -8; }

std::string SquareName(int square) {
  return {static_cast<char>('a' + FileOf(square)),
          static_cast<char>('1' + RankOf(square))};
}

absl::Status FenError(std::string_view field, std::string_view value) {
  return absl::InvalidArgumentError(absl::StrCat(
      "FEN: bad ", std::string(field), " '", std::string(value), "'"));
}

// Splits `text` at runs of spaces.
std::vector<std::string_view> Fields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) fields.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return fields;
}

bool ParseInt(std::string_view text, int* value) {
  return absl::SimpleAtoi(absl::string_view(text.data(), text.size()), value);
}

}  // namespace

std::string Move::ToUci() const {
  std::string uci = SquareName(from) + SquareName(to);
  if (kind == Kind::kPromotion) uci += kPieceLetters[promotion];
  return uci;
}

absl::StatusOr<Position> Position::FromFen(std::string_view fen) {
  const std::vector<std::string_view> fields = Fields(fen);
  if (fields.size() < 4 || fields.size() > 6) return FenError("FEN", fen);
  Position position;
  int file = 0;
  int rank = 7;
  for (const char c : fields[0]) {
    if (c == '/') {
      if (file != 8 || rank == 0) return FenError("board", fields[0]);
      file = 0;
      --rank;
    } else if (c >= '1' && c <= '8') {
      file += c - '0';
    } else {
      const char* letter = nullptr;
      for (const char* p = kPieceLetters; *p != '\0'; ++p) {
        if (*p == std::tolower(c)) letter = p;
      }
      if (letter == nullptr || file > 7) return FenError("board", fields[0]);
      position.Put(std::isupper(c) ? kWhite : kBlack,
                   static_cast<PieceType>(letter - kPieceLetters),
                   Square(file, rank));
      ++file;
    }
    if (file > 8) return FenError("board", fields[0]);
  }
  if (file != 8 || rank != 0) return FenError("board", fields[0]);
  if (fields[1] != "w" && fields[1] != "b") return FenError("side", fields[1]);
  position.side_to_move_ = fields[1] == "w" ? kWhite : kBlack;
  if (fields[2] != "-") {
    for (const char c : fields[2]) {
      const Color color = std::isupper(c) ? kWhite : kBlack;
      const int king = position.KingSquare(color);
      if (king < 0 || RankOf(king) != BackRank(color)) {
        return FenError("castling", fields[2]);
      }
      const Bitboard rooks =
          position.pieces(color, kRook) & (kRank1 << (8 * BackRank(color)));
      const char lower = static_cast<char>(std::tolower(c));
      int rook_file = -1;
      if (lower == 'k' || lower == 'q') {
        // The outermost rook on that side of the king.
        for (int f = 0; f < 8; ++f) {
          const bool on_side =
              lower == 'k' ? f > FileOf(king) : f < FileOf(king);
          if (!on_side || !(rooks & SquareBit(Square(f, BackRank(color))))) {
            continue;
          }
          if (rook_file < 0 || lower == 'k') rook_file = f;
        }
      } else if (lower >= 'a' && lower <= 'h' &&
                 (rooks & SquareBit(Square(lower - 'a', BackRank(color))))) {
        rook_file = lower - 'a';
      }
      if (rook_file < 0) return FenError("castling", fields[2]);
      position.set_castling_rook_file(
          color, rook_file > FileOf(king) ? kKingside : kQueenside, rook_file);
    }
  }
  if (fields[3] != "-") {
    const std::string_view ep = fields[3];
    if (ep.size() != 2 || ep[0] < 'a' || ep[0] > 'h' ||
        (ep[1] != '3' && ep[1] != '6')) {
      return FenError("en passant", ep);
    }
    position.en_passant_ =
        static_cast<int8_t>(Square(ep[0] - 'a', ep[1] - '1'));
  }
  int fullmove = 1;
  if (fields.size() > 4 && !ParseInt(fields[4], &position.rule50_)) {
    return FenError("halfmove clock", fields[4]);
  }
  if (fields.size() > 5 && !ParseInt(fields[5], &fullmove)) {
    return FenError("fullmove number", fields[5]);
  }
  position.game_ply_ =
      2 * (fullmove - 1) + (position.side_to_move_ == kBlack ? 1 : 0);
  return position;
}

std::string Position::Fen() const {
  std::string fen;
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      const int square = Square(file, rank);
      const int type = PieceTypeAt(square);
      if (type < 0) {
        ++empty;
        continue;
      }
      if (empty > 0) fen += static_cast<char>('0' + empty);
      empty = 0;
      const char letter = kPieceLetters[type];
      fen += (by_color_[kWhite] & SquareBit(square))
                 ? static_cast<char>(std::toupper(letter))
                 : letter;
    }
    if (empty > 0) fen += static_cast<char>('0' + empty);
    if (rank > 0) fen += '/';
  }
  fen += side_to_move_ == kWhite ? " w " : " b ";
  std::string castling;
  for (const Color color : {kWhite, kBlack}) {
    for (const CastlingSide side : {kKingside, kQueenside}) {
      const int file = castling_rook_file_[color][side];
      if (file < 0) continue;
      char letter = (side == kKingside && file == 7)    ? 'k'
                    : (side == kQueenside && file == 0) ? 'q'
                                                        : 'a' + file;
      castling +=
          color == kWhite ? static_cast<char>(std::toupper(letter)) : letter;
    }
  }
  fen += castling.empty() ? "-" : castling;
  fen += ' ';
  fen += en_passant_ < 0 ? "-" : SquareName(en_passant_);
  absl::StrAppend(&fen, " ", rule50_, " ", game_ply_ / 2 + 1);
  return fen;
}

void Position::Put(Color color, PieceType type, int square) {
  by_color_[color] |= SquareBit(square);
  by_type_[type] |= SquareBit(square);
}

void Position::Remove(int square) {
  const Bitboard keep = ~SquareBit(square);
  for (Bitboard& b : by_color_) b &= keep;
  for (Bitboard& b : by_type_) b &= keep;
}

bool Position::has_castling_rights() const {
  for (const auto& sides : castling_rook_file_) {
    for (const int8_t file : sides) {
      if (file >= 0) return true;
    }
  }
  return false;
}

int Position::PieceTypeAt(int square) const {
  const Bitboard bit = SquareBit(square);
  for (int type = 0; type < kPieceTypes; ++type) {
    if (by_type_[type] & bit) return type;
  }
  return -1;
}

int Position::KingSquare(Color color) const {
  const Bitboard king = pieces(color, kKing);
  return king == 0 ? -1 : LowestSquare(king);
}

bool Position::IsAttacked(int square, Color by) const {
  const Bitboard occ = occupied();
  const Bitboard them = by_color_[by];
  const Bitboard diagonal = by_type_[kBishop] | by_type_[kQueen];
  const Bitboard line = by_type_[kRook] | by_type_[kQueen];
  return (KnightAttacks(square) & them & by_type_[kKnight]) ||
         (KingAttacks(square) & them & by_type_[kKing]) ||
         (PawnAttacks(by == kWhite, square) & them & by_type_[kPawn]) ||
         (BishopAttacks(square, occ) & them & diagonal) ||
         (RookAttacks(square, occ) & them & line);
}

bool Position::InCheck() const {
  const int king = KingSquare(side_to_move_);
  return king >= 0 && IsAttacked(king, Opponent(side_to_move_));
}

void Position::AddCastling(CastlingSide side, MoveList& moves) const {
  const Color us = side_to_move_;
  const int rook_file = castling_rook_file_[us][side];
  const int king = KingSquare(us);
  if (rook_file < 0 || king < 0 || RankOf(king) != BackRank(us)) return;
  const int rook = Square(rook_file, BackRank(us));
  if (!(pieces(us, kRook) & SquareBit(rook))) return;
  const int king_to = Square(side == kKingside ? 6 : 2, BackRank(us));
  const int rook_to = Square(side == kKingside ? 5 : 3, BackRank(us));
  const Bitboard must_be_empty = (Between(king, king_to) | SquareBit(king_to) |
                                  Between(rook, rook_to) | SquareBit(rook_to)) &
                                 ~SquareBit(king) & ~SquareBit(rook);
  if (occupied() & must_be_empty) return;
  const Color them = Opponent(us);
  // The king may not start in, pass through or land in check (the landing
  // square is checked again by the legality filter, with the rook moved).
  Bitboard path = Between(king, king_to) | SquareBit(king) | SquareBit(king_to);
  while (path != 0) {
    if (IsAttacked(PopLowestSquare(path), them)) return;
  }
  moves.push_back(Move{.from = static_cast<uint8_t>(king),
                       .to = static_cast<uint8_t>(rook),
                       .kind = Move::Kind::kCastling});
}

void Position::GeneratePseudoLegal(MoveList& moves) const {
  const Color us = side_to_move_;
  const Bitboard own = by_color_[us];
  const Bitboard them = by_color_[Opponent(us)];
  const Bitboard occ = own | them;
  const int up = Forward(us);
  const int last_rank = us == kWhite ? 7 : 0;
  const int start_rank = us == kWhite ? 1 : 6;
  auto add_pawn_move = [&](int from, int to, Move::Kind kind) {
    if (RankOf(to) != last_rank) {
      moves.push_back(Move{.from = static_cast<uint8_t>(from),
                           .to = static_cast<uint8_t>(to),
                           .kind = kind});
      return;
    }
    for (const PieceType promotion : {kKnight, kBishop, kRook, kQueen}) {
      moves.push_back(Move{.from = static_cast<uint8_t>(from),
                           .to = static_cast<uint8_t>(to),
                           .kind = Move::Kind::kPromotion,
                           .promotion = promotion});
    }
  };
  Bitboard pawns = pieces(us, kPawn);
  while (pawns != 0) {
    const int from = PopLowestSquare(pawns);
    const int to = from + up;
    if (to >= 0 && to < 64 && !(occ & SquareBit(to))) {
      add_pawn_move(from, to, Move::Kind::kNormal);
      const int double_to = to + up;
      if (RankOf(from) == start_rank && !(occ & SquareBit(double_to))) {
        add_pawn_move(from, double_to, Move::Kind::kNormal);
      }
    }
    Bitboard captures = PawnAttacks(us == kBlack, from) & them;
    while (captures != 0) {
      add_pawn_move(from, PopLowestSquare(captures), Move::Kind::kNormal);
    }
    if (en_passant_ >= 0 &&
        (PawnAttacks(us == kBlack, from) & SquareBit(en_passant_))) {
      add_pawn_move(from, en_passant_, Move::Kind::kEnPassant);
    }
  }
  for (const PieceType type : {kKnight, kBishop, kRook, kQueen, kKing}) {
    Bitboard movers = pieces(us, type);
    while (movers != 0) {
      const int from = PopLowestSquare(movers);
      Bitboard targets = type == kKnight   ? KnightAttacks(from)
                         : type == kBishop ? BishopAttacks(from, occ)
                         : type == kRook   ? RookAttacks(from, occ)
                         : type == kQueen  ? QueenAttacks(from, occ)
                                           : KingAttacks(from);
      targets &= ~own;
      while (targets != 0) {
        moves.push_back(
            Move{.from = static_cast<uint8_t>(from),
                 .to = static_cast<uint8_t>(PopLowestSquare(targets))});
      }
    }
  }
  AddCastling(kKingside, moves);
  AddCastling(kQueenside, moves);
}

MoveList Position::LegalMoves() const {
  MoveList pseudo_legal;
  GeneratePseudoLegal(pseudo_legal);
  MoveList legal;
  const Color us = side_to_move_;
  for (const Move& move : pseudo_legal) {
    const Position next = AfterMove(move);
    const int king = next.KingSquare(us);
    if (king < 0 || !next.IsAttacked(king, Opponent(us))) {
      legal.push_back(move);
    }
  }
  return legal;
}

bool Position::IsLegal(const Move& move) const {
  MoveList pseudo_legal;
  GeneratePseudoLegal(pseudo_legal);
  for (const Move& candidate : pseudo_legal) {
    if (candidate != move) continue;
    const Position next = AfterMove(move);
    const int king = next.KingSquare(side_to_move_);
    return king < 0 || !next.IsAttacked(king, Opponent(side_to_move_));
  }
  return false;
}

bool Position::IsZeroing(const Move& move) const {
  if (move.kind == Move::Kind::kCastling) return false;
  return (pieces(kPawn) & SquareBit(move.from)) ||
         (by_color_[Opponent(side_to_move_)] & SquareBit(move.to));
}

Position Position::AfterMove(const Move& move) const {
  Position next = *this;
  const Color us = side_to_move_;
  const Color them = Opponent(us);
  next.en_passant_ = -1;
  next.side_to_move_ = them;
  ++next.game_ply_;
  if (move.kind == Move::Kind::kCastling) {
    const bool kingside = FileOf(move.to) > FileOf(move.from);
    next.Remove(move.from);
    next.Remove(move.to);
    next.Put(us, kKing, Square(kingside ? 6 : 2, BackRank(us)));
    next.Put(us, kRook, Square(kingside ? 5 : 3, BackRank(us)));
    next.castling_rook_file_[us] = {-1, -1};
    ++next.rule50_;
    return next;
  }
  const int type = PieceTypeAt(move.from);
  const int captured_square =
      move.kind == Move::Kind::kEnPassant ? move.to - Forward(us) : move.to;
  const bool capture = (by_color_[them] & SquareBit(captured_square)) != 0;
  if (capture) next.Remove(captured_square);
  next.Remove(move.from);
  if (type >= 0) {
    next.Put(us,
             move.kind == Move::Kind::kPromotion ? move.promotion
                                                 : static_cast<PieceType>(type),
             move.to);
  }
  // A double step leaves an en-passant square only when an enemy pawn
  // could take it (as lc0's board does).
  if (type == kPawn && (move.to - move.from == 2 * Forward(us))) {
    const int skipped = move.from + Forward(us);
    if (PawnAttacks(us == kBlack, skipped) & pieces(them, kPawn)) {
      next.en_passant_ = static_cast<int8_t>(skipped);
    }
  }
  next.rule50_ = (type == kPawn || capture) ? 0 : rule50_ + 1;
  if (type == kKing) next.castling_rook_file_[us] = {-1, -1};
  for (const Color color : {kWhite, kBlack}) {
    for (int8_t& file : next.castling_rook_file_[color]) {
      if (file < 0) continue;
      const int rook = Square(file, BackRank(color));
      if (rook == move.from || rook == move.to) file = -1;
    }
  }
  return next;
}

bool Position::SameBoard(const Position& other) const {
  return by_color_ == other.by_color_ && by_type_ == other.by_type_ &&
         side_to_move_ == other.side_to_move_ &&
         castling_rook_file_ == other.castling_rook_file_ &&
         en_passant_ == other.en_passant_;
}

}  // namespace sluice::lc0::chess
