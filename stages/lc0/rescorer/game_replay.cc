#include "stages/lc0/rescorer/game_replay.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "stages/lc0/chess/policy_index.h"
#include "stages/lc0/rescorer/record_planes.h"

namespace sluice::lc0::rescorer {
namespace {

using chess::Bitboard;
using chess::Color;
using chess::FileOf;
using chess::LowestSquare;
using chess::MirrorRanks;
using chess::Move;
using chess::PieceType;
using chess::PopCount;
using chess::Position;
using chess::RankOf;
using chess::SquareBit;

Rejection Reject(std::string_view reason, int record, std::string_view what) {
  return Rejection{
      .reason = reason,
      .detail = absl::StrCat("record ", record, ": ", std::string(what))};
}

// The files of the castling rooks in a castling byte pair of format >= 2,
// as planes (ours on rank 1, theirs on rank 8) with the transform undone:
// {our file, their file}, -1 for none.
std::pair<int, int> RookFiles(uint8_t ours, uint8_t theirs, int transform) {
  Bitboard plane = Bitboard{ours} | (Bitboard{theirs} << 56);
  if (plane != 0 && plane != ~Bitboard{0}) {
    plane = UndoTransform(plane, transform);
  }
  const Bitboard first = plane & chess::kRank1;
  const Bitboard last = plane & chess::kRank8;
  return {first ? FileOf(LowestSquare(first)) : -1,
          last ? FileOf(LowestSquare(last)) : -1};
}

// The en-passant target square of record 0 in its side to move's view, or
// -1.
int EnPassantSquare(const V6TrainingRecord& record, const PiecePlanes& now) {
  if (IsCanonicalFormat(record.input_format)) {
    Bitboard plane = Bitboard{record.side_to_move_or_enpassant} << 56;
    if (plane != 0) plane = UndoTransform(plane, RecordTransform(record));
    plane &= chess::kRank8;
    if (PopCount(plane) != 1) return -1;
    return chess::Square(FileOf(LowestSquare(plane)), 5);
  }
  // Their pawn that moved two squares since history step 1.
  const Bitboard before = DecodePiecePlanes(record, 1)[kTheirs + chess::kPawn];
  if (before == 0) return -1;
  const Bitboard diff = before ^ now[kTheirs + chess::kPawn];
  if (PopCount(diff) != 2) return -1;
  const int a = LowestSquare(diff);
  const int b = 63 - std::countl_zero(diff);
  if (FileOf(a) != FileOf(b) || RankOf(b) - RankOf(a) != 2) return -1;
  return a + 8;
}

bool ValidPosition(const Position& position) {
  constexpr Bitboard kBackRanks = chess::kRank1 | chess::kRank8;
  if (PopCount(position.pieces(chess::kWhite, chess::kKing)) != 1 ||
      PopCount(position.pieces(chess::kBlack, chess::kKing)) != 1 ||
      (position.pieces(chess::kPawn) & kBackRanks)) {
    return false;
  }
  const Color them = chess::Opponent(position.side_to_move());
  return !position.IsAttacked(position.KingSquare(them),
                              position.side_to_move());
}

// The move from `before` (the position of `previous`) to `current`, found
// from the pieces of the side that moved; nullopt when none fits.
std::optional<Move> InferMove(const V6TrainingRecord& previous,
                              const V6TrainingRecord& current,
                              const Position& before) {
  const PiecePlanes prev = DecodePiecePlanes(previous, 0);
  const PiecePlanes cur = DecodePiecePlanes(current, 0);
  // Everything in the view of the side to move after the move.
  Bitboard old_squares[6];
  Bitboard diff[6];
  Bitboard enemy = 0;
  for (int t = 0; t < 6; ++t) {
    old_squares[t] = MirrorRanks(prev[t]);
    diff[t] = old_squares[t] ^ cur[kTheirs + t];
    enemy |= MirrorRanks(prev[kTheirs + t]);
  }
  const bool mover_black = before.side_to_move() == chess::kBlack;
  auto absolute = [&](int square) {
    return static_cast<uint8_t>(mover_black ? square : square ^ 56);
  };
  // The origin and target of piece type t when exactly one of each.
  auto from_to = [&](int t) -> std::optional<std::pair<int, int>> {
    const Bitboard from = diff[t] & old_squares[t];
    const Bitboard to = diff[t] & cur[kTheirs + t];
    if (PopCount(from) != 1 || PopCount(to) != 1) return std::nullopt;
    return std::make_pair(LowestSquare(from), LowestSquare(to));
  };
  auto plain = [&](int from, int to, Move::Kind kind) {
    return Move{.from = absolute(from), .to = absolute(to), .kind = kind};
  };
  if (PopCount(diff[chess::kPawn]) == 1) {
    const Bitboard from = diff[chess::kPawn] & old_squares[chess::kPawn];
    if (from == 0) return std::nullopt;
    for (const PieceType t :
         {chess::kKnight, chess::kBishop, chess::kRook, chess::kQueen}) {
      if (PopCount(diff[t]) != 1) continue;
      if (!(diff[t] & cur[kTheirs + t])) return std::nullopt;
      Move move = plain(LowestSquare(from), LowestSquare(diff[t]),
                        Move::Kind::kPromotion);
      move.promotion = t;
      return move;
    }
    return std::nullopt;
  }
  if (PopCount(diff[chess::kKing]) == 2) {
    const auto king = from_to(chess::kKing);
    if (!king) return std::nullopt;
    const auto [king_from, king_to] = *king;
    if (PopCount(diff[chess::kRook]) == 2) {
      const auto rook = from_to(chess::kRook);
      if (!rook) return std::nullopt;
      return plain(king_from, rook->first, Move::Kind::kCastling);
    }
    if (std::abs(FileOf(king_to) - FileOf(king_from)) > 1) {
      const int rook = king_to > king_from ? king_to - 1 : king_to + 1;
      return plain(king_from, rook, Move::Kind::kCastling);
    }
    return plain(king_from, king_to, Move::Kind::kNormal);
  }
  if (PopCount(diff[chess::kQueen]) == 2) {
    const auto queen = from_to(chess::kQueen);
    if (!queen) return std::nullopt;
    return plain(queen->first, queen->second, Move::Kind::kNormal);
  }
  if (PopCount(diff[chess::kRook]) == 2) {
    const auto rook = from_to(chess::kRook);
    if (!rook) return std::nullopt;
    const auto [from, to] = *rook;
    const Bitboard king = old_squares[chess::kKing];
    if (PopCount(king) == 1) {
      const int k = LowestSquare(king);
      if (RankOf(k) == RankOf(from) && RankOf(k) == RankOf(to) &&
          ((from < k && k < to) || (to < k && k < from))) {
        return plain(k, from, Move::Kind::kCastling);
      }
    }
    return plain(from, to, Move::Kind::kNormal);
  }
  for (const PieceType t : {chess::kBishop, chess::kKnight}) {
    if (PopCount(diff[t]) != 2) continue;
    const auto piece = from_to(t);
    if (!piece) return std::nullopt;
    return plain(piece->first, piece->second, Move::Kind::kNormal);
  }
  if (PopCount(diff[chess::kPawn]) == 2) {
    const auto pawn = from_to(chess::kPawn);
    if (!pawn) return std::nullopt;
    const auto [from, to] = *pawn;
    const bool en_passant =
        FileOf(from) != FileOf(to) && !(enemy & SquareBit(to));
    return plain(from, to,
                 en_passant ? Move::Kind::kEnPassant : Move::Kind::kNormal);
  }
  return std::nullopt;
}

// lc0's repetition count of positions[k].
int RepetitionsOf(const GameReplay& replay, int k) {
  const Position& last = replay.positions[k];
  if (last.rule50() < 4) return 0;
  for (int j = k - 4; j >= 0; j -= 2) {
    const Position& earlier = replay.positions[j];
    if (earlier.SameBoard(last)) return 1 + replay.repetitions[j];
    if (earlier.rule50() < 2) return 0;
  }
  return 0;
}

}  // namespace

bool GameReplay::NoRepetitionWithinRule50(int k) const {
  const int rule50 = positions[k].rule50();
  if (k + 1 < rule50) return false;
  for (int j = k - rule50 + 1; j <= k; ++j) {
    if (repetitions[j] != 0) return false;
  }
  return true;
}

std::optional<Rejection> PositionOfRecord(const V6TrainingRecord& record,
                                          Position* position) {
  const PiecePlanes now = DecodePiecePlanes(record, 0);
  const bool canonical = IsCanonicalFormat(record.input_format);
  const bool black = !canonical && record.side_to_move_or_enpassant != 0;
  const Color us = black ? chess::kBlack : chess::kWhite;
  const Color them = chess::Opponent(us);
  auto orient = [&](Bitboard b) { return black ? MirrorRanks(b) : b; };
  *position = Position();
  for (int t = 0; t < 6; ++t) {
    for (const auto& [color, plane] :
         {std::pair{us, now[t]}, std::pair{them, now[kTheirs + t]}}) {
      Bitboard squares = orient(plane);
      while (squares != 0) {
        const int square = chess::PopLowestSquare(squares);
        if (position->PieceTypeAt(square) >= 0) {
          return Reject("invalid_position", 0, "two pieces on one square");
        }
        position->Put(color, static_cast<PieceType>(t), square);
      }
    }
  }
  position->set_side_to_move(us);
  if (record.input_format == 1) {
    if (record.castling_us_ooo)
      position->set_castling_rook_file(us, chess::kQueenside, 0);
    if (record.castling_us_oo)
      position->set_castling_rook_file(us, chess::kKingside, 7);
    if (record.castling_them_ooo)
      position->set_castling_rook_file(them, chess::kQueenside, 0);
    if (record.castling_them_oo)
      position->set_castling_rook_file(them, chess::kKingside, 7);
  } else {
    const int transform = RecordTransform(record);
    const auto [our_long, their_long] =
        RookFiles(record.castling_us_ooo, record.castling_them_ooo, transform);
    const auto [our_short, their_short] =
        RookFiles(record.castling_us_oo, record.castling_them_oo, transform);
    position->set_castling_rook_file(us, chess::kQueenside, our_long);
    position->set_castling_rook_file(them, chess::kQueenside, their_long);
    position->set_castling_rook_file(us, chess::kKingside, our_short);
    position->set_castling_rook_file(them, chess::kKingside, their_short);
  }
  const int en_passant = EnPassantSquare(record, now);
  position->set_en_passant(en_passant < 0 ? -1
                           : black        ? en_passant ^ 56
                                          : en_passant);
  position->set_rule50(record.rule50_count);
  position->set_game_ply(record.rule50_count);
  if (!ValidPosition(*position)) {
    return Reject("invalid_position", 0,
                  "not one king each, a pawn on a back rank or the side not "
                  "to move in check");
  }
  return std::nullopt;
}

GameReplay ReplayMoves(const Position& start, std::span<const Move> moves) {
  GameReplay replay;
  replay.positions.reserve(moves.size() + 1);
  replay.positions.push_back(start);
  replay.repetitions.push_back(0);
  for (const Move& move : moves) {
    replay.moves.push_back(move);
    replay.positions.push_back(replay.positions.back().AfterMove(move));
    replay.repetitions.push_back(
        RepetitionsOf(replay, static_cast<int>(replay.positions.size()) - 1));
  }
  return replay;
}

std::optional<Rejection> ReplayGame(std::span<const V6TrainingRecord> records,
                                    GameReplay* replay) {
  const int n = static_cast<int>(records.size());
  replay->positions.clear();
  replay->moves.clear();
  replay->repetitions.clear();
  replay->positions.reserve(n);
  replay->positions.emplace_back();
  if (std::optional<Rejection> rejection =
          PositionOfRecord(records[0], &replay->positions[0])) {
    return rejection;
  }
  replay->repetitions.push_back(0);
  for (int k = 1; k < n; ++k) {
    const V6TrainingRecord& from = records[k - 1];
    const Position& before = replay->positions[k - 1];
    const std::optional<Move> move = InferMove(from, records[k], before);
    if (!move) {
      return Reject("played_move_illegal", k - 1,
                    "no move leads to the next record's pieces");
    }
    const int index = chess::PolicyIndex(
        *move, before.side_to_move() == chess::kBlack, RecordTransform(from));
    if (from.visits > 0 && index != from.played_idx) {
      return Reject("played_move_not_listed", k - 1,
                    absl::StrCat("move ", move->ToUci(), " is policy index ",
                                 index, ", played_idx is ", from.played_idx));
    }
    if (index < 0 ||
        (from.probabilities[index] < 0 && !(from.invariance_info & 0x40))) {
      return Reject(
          "played_move_marked_illegal", k - 1,
          absl::StrCat("move ", move->ToUci(), " has a negative probability"));
    }
    if (!before.IsLegal(*move)) {
      return Reject("played_move_illegal", k - 1,
                    absl::StrCat("move ", move->ToUci(), " is illegal"));
    }
    replay->moves.push_back(*move);
    replay->positions.push_back(before.AfterMove(*move));
    replay->repetitions.push_back(RepetitionsOf(*replay, k));
  }
  return std::nullopt;
}

}  // namespace sluice::lc0::rescorer
