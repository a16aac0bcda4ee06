#include "stages/lc0/rescorer/input_format_conversion.h"

#include <array>
#include <cstring>

#include "stages/lc0/chess/policy_index.h"
#include "stages/lc0/rescorer/record_planes.h"

namespace sluice::lc0::rescorer {
namespace {

using chess::Bitboard;
using chess::Color;
using chess::Position;

constexpr Bitboard kFilesAToD = 0x0F0F0F0F0F0F0F0Full;
constexpr Bitboard kRanks5To8 = 0xFFFFFFFF00000000ull;

// `b` in the view of `side` (ranks mirrored for black).
Bitboard ViewOf(Bitboard b, Color side) {
  return side == chess::kBlack ? chess::MirrorRanks(b) : b;
}

// The policy index `index` under transform `from` mapped to transform
// `to` (lc0's square mapping; each is its own inverse).
int RemapIndex(int index, int from, int to) {
  static const auto table = [] {
    std::array<std::array<int16_t, chess::kPolicyMoves>, 64> remap{};
    for (int a = 0; a < 8; ++a) {
      for (int b = 0; b < 8; ++b) {
        for (int i = 0; i < chess::kPolicyMoves; ++i) {
          const std::string name = chess::PolicyMoveName(i);
          chess::Move move{.from = static_cast<uint8_t>(
                               chess::Square(name[0] - 'a', name[1] - '1')),
                           .to = static_cast<uint8_t>(
                               chess::Square(name[2] - 'a', name[3] - '1'))};
          if (name.size() == 5) {
            move.kind = chess::Move::Kind::kPromotion;
            move.promotion = name[4] == 'q'   ? chess::kQueen
                             : name[4] == 'r' ? chess::kRook
                                              : chess::kBishop;
          }
          // Undo `a` (the index's squares are transformed), apply `b`.
          auto undo = [&](int square) {
            int file = chess::FileOf(square);
            int rank = chess::RankOf(square);
            if (a & 0b110) rank = 7 - rank;
            if (a & 0b101) file = 7 - file;
            return static_cast<uint8_t>(chess::Square(file, rank));
          };
          move.from = undo(move.from);
          move.to = undo(move.to);
          remap[a * 8 + b][i] =
              static_cast<int16_t>(chess::PolicyIndex(move, false, b));
        }
      }
    }
    return remap;
  }();
  return table[from * 8 + to][index];
}

void EncodeRecord(const GameReplay& replay, int k, int format,
                  V6TrainingRecord& record) {
  const Position& now = replay.positions[k];
  const Color us = now.side_to_move();
  const Color them = chess::Opponent(us);
  const bool canonical = IsCanonicalFormat(format);
  const int transform = canonical ? ChooseTransform(now) : 0;
  auto encode = [&](Bitboard b) {
    return StoredPlaneOfSquares(ApplyTransform(ViewOf(b, us), transform));
  };
  // memset, not std::fill: records lie back to back in the chunk, so the
  // planes of every other record are not 8-byte aligned.
  std::memset(record.planes, 0, sizeof(record.planes));
  for (int step = 0; step < 8 && k - step >= 0; ++step) {
    const int j = k - step;
    if (canonical && step > 0) {
      // Positions before a zeroing move or a castling change cannot recur.
      const Position& after = replay.positions[j + 1];
      const Position& before = replay.positions[j];
      bool castling_changed = false;
      for (const Color c : {chess::kWhite, chess::kBlack}) {
        for (const chess::CastlingSide side :
             {chess::kQueenside, chess::kKingside}) {
          castling_changed |= before.castling_rook_file(c, side) !=
                              after.castling_rook_file(c, side);
        }
      }
      if (after.rule50() == 0 || castling_changed) break;
    }
    const Position& position = replay.positions[j];
    for (int t = 0; t < chess::kPieceTypes; ++t) {
      const auto type = static_cast<chess::PieceType>(t);
      record.planes[step * 13 + t] = encode(position.pieces(us, type));
      record.planes[step * 13 + kTheirs + t] =
          encode(position.pieces(them, type));
    }
    record.planes[step * 13 + 12] =
        replay.repetitions[j] > 0 ? ~uint64_t{0} : 0;
  }
  auto castling = [&](Color c, chess::CastlingSide side) -> uint8_t {
    const int file = now.castling_rook_file(c, side);
    if (file < 0) return 0;
    return format == 1 ? 1 : static_cast<uint8_t>(1u << file);
  };
  record.castling_us_ooo = castling(us, chess::kQueenside);
  record.castling_us_oo = castling(us, chess::kKingside);
  record.castling_them_ooo = castling(them, chess::kQueenside);
  record.castling_them_oo = castling(them, chess::kKingside);
  if (canonical) {
    uint8_t en_passant = 0;
    if (now.en_passant() >= 0) {
      const Bitboard mark = ApplyTransform(
          chess::SquareBit(chess::Square(chess::FileOf(now.en_passant()), 7)),
          transform);
      en_passant = static_cast<uint8_t>((mark & chess::kRank8) >> 56);
    }
    record.side_to_move_or_enpassant = en_passant;
  } else {
    record.side_to_move_or_enpassant = us == chess::kBlack ? 1 : 0;
  }
  const int old_transform = RecordTransform(record);
  if (old_transform != transform) {
    // Promotion entries have no image under a mirror or transpose (there
    // are no pawns then): they become the illegal-move marker.
    float permuted[kPolicySize];
    std::fill(std::begin(permuted), std::end(permuted), -1.0f);
    for (int i = 0; i < kPolicySize; ++i) {
      const int j = RemapIndex(i, old_transform, transform);
      if (j >= 0) permuted[j] = record.probabilities[i];
    }
    std::copy(std::begin(permuted), std::end(permuted),
              std::begin(record.probabilities));
    if (record.visits > 0) {
      for (uint16_t* index : {&record.played_idx, &record.best_idx}) {
        const int j = *index < kPolicySize
                          ? RemapIndex(*index, old_transform, transform)
                          : -1;
        if (j >= 0) *index = static_cast<uint16_t>(j);
      }
    }
  }
  record.invariance_info =
      static_cast<uint8_t>((record.invariance_info & 0x78) | transform |
                           (canonical && us == chess::kBlack ? 0x80 : 0));
  record.input_format = static_cast<uint32_t>(format);
}

}  // namespace

int ChooseTransform(const Position& position) {
  if (position.has_castling_rights()) return 0;
  const Color us = position.side_to_move();
  Bitboard king = ViewOf(position.pieces(us, chess::kKing), us);
  int transform = 0;
  if (king & kFilesAToD) {
    transform |= 1;
    king = chess::FlipFiles(king);
  }
  if (position.pieces(chess::kPawn) != 0) return transform;
  if (king & kRanks5To8) {
    transform |= 2;
    king = chess::MirrorRanks(king);
  }
  if (king == 0) return transform;
  const int square = chess::LowestSquare(king);
  const int diagonal = chess::FileOf(square) + chess::RankOf(square);
  if (diagonal > 7) return transform | 4;
  if (diagonal < 7) return transform;
  // On the h1-e4 diagonal: the orientation with the smaller occupancy, then
  // the smaller own pieces, then kings, queens, rooks, knights, bishops.
  const Bitboard sets[] = {position.occupied(),
                           position.pieces(us),
                           position.pieces(chess::kKing),
                           position.pieces(chess::kQueen),
                           position.pieces(chess::kRook),
                           position.pieces(chess::kKnight),
                           position.pieces(chess::kBishop)};
  for (const Bitboard set : sets) {
    const Bitboard plain = ApplyTransform(ViewOf(set, us), transform);
    const Bitboard transposed = chess::TransposeAntiDiagonal(plain);
    if (transposed != plain) {
      return transposed < plain ? transform | 4 : transform;
    }
  }
  return transform;
}

void ConvertInputFormat(const GameReplay& replay, int format,
                        std::span<V6TrainingRecord> records) {
  for (size_t k = 0; k < records.size(); ++k) {
    EncodeRecord(replay, static_cast<int>(k), format, records[k]);
  }
}

}  // namespace sluice::lc0::rescorer
