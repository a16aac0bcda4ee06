#include "stages/lc0/chess/position.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace sluice::lc0::chess {
namespace {

// Leaf nodes of the legal move tree `depth` plies deep.
uint64_t Perft(const Position& position, int depth) {
  const MoveList moves = position.LegalMoves();
  if (depth == 1) return moves.size();
  uint64_t nodes = 0;
  for (const Move& move : moves) {
    nodes += Perft(position.AfterMove(move), depth - 1);
  }
  return nodes;
}

// AddressSanitizer slows the move generator down ~10x: the deepest
// counts run in the release build only.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kDepthCut = 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kDepthCut = 1;
#else
constexpr int kDepthCut = 0;
#endif
#else
constexpr int kDepthCut = 0;
#endif

struct PerftCase {
  std::string fen;
  // counts[d - 1]: leaf nodes at depth d.
  std::vector<uint64_t> counts;
};

// The published counts of the standard test positions (the chess
// programming wiki's "Perft Results").
const PerftCase kCases[] = {
    {std::string(kStartFen), {20, 400, 8902, 197281, 4865609}},
    // "Kiwipete": castling both ways, pins, en passant, promotions.
    {"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
     {48, 2039, 97862, 4085603}},
    // Position 3: en passant out of and into check along a rank.
    {"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
     {14, 191, 2812, 43238, 674624}},
    // Position 4: promotions with capture, castling rights of one side.
    {"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
     {6, 264, 9467, 422333}},
    // Its mirror with colours swapped: the same counts.
    {"r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
     {6, 264, 9467, 422333}},
    // Position 5: a promotion that captures and gives check.
    {"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
     {44, 1486, 62379, 2103487}},
    // Position 6.
    {"r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 "
     "10",
     {46, 2079, 89890, 3894594}},
};

TEST(PositionTest, PerftMatchesPublishedCounts) {
  for (const PerftCase& c : kCases) {
    absl::StatusOr<Position> position = Position::FromFen(c.fen);
    ASSERT_TRUE(position.ok()) << position.status();
    const int depths = static_cast<int>(c.counts.size()) - kDepthCut;
    for (int depth = 1; depth <= depths; ++depth) {
      EXPECT_EQ(Perft(*position, depth), c.counts[depth - 1])
          << c.fen << " depth " << depth;
    }
  }
}

TEST(PositionTest, FenRoundTrips) {
  for (const PerftCase& c : kCases) {
    absl::StatusOr<Position> position = Position::FromFen(c.fen);
    ASSERT_TRUE(position.ok());
    EXPECT_EQ(position->Fen(), c.fen);
  }
}

TEST(PositionTest, RejectsBadFen) {
  EXPECT_FALSE(Position::FromFen("").ok());
  EXPECT_FALSE(Position::FromFen("8/8/8/8/8/8/8/9 w - - 0 1").ok());
  EXPECT_FALSE(Position::FromFen("8/8/8/8/8/8/8/8 x - - 0 1").ok());
  EXPECT_FALSE(Position::FromFen("4k3/8/8/8/8/8/8/4K3 w K - 0 1").ok());
  EXPECT_FALSE(Position::FromFen("4k3/8/8/8/8/8/8/4K3 w - e4 0 1").ok());
}

TEST(PositionTest, MovesUpdateRightsCountersAndEnPassant) {
  absl::StatusOr<Position> start = Position::FromFen(kStartFen);
  ASSERT_TRUE(start.ok());
  const Position after_e4 = start->AfterMove(Move{.from = 12, .to = 28});
  // No black pawn can take on e3: no en-passant square.
  EXPECT_EQ(after_e4.Fen(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
  absl::StatusOr<Position> d4 =
      Position::FromFen("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1");
  ASSERT_TRUE(d4.ok());
  EXPECT_EQ(d4->AfterMove(Move{.from = 12, .to = 28}).en_passant(), 20);
  const Position after_nf6 = after_e4.AfterMove(Move{.from = 62, .to = 45});
  EXPECT_EQ(after_nf6.rule50(), 1);
  EXPECT_EQ(after_nf6.en_passant(), -1);
  // White castles short (king takes its rook): both white rights go.
  absl::StatusOr<Position> castle =
      Position::FromFen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 3 20");
  ASSERT_TRUE(castle.ok());
  const Move short_castle{.from = 4, .to = 7, .kind = Move::Kind::kCastling};
  EXPECT_TRUE(castle->IsLegal(short_castle));
  EXPECT_EQ(castle->AfterMove(short_castle).Fen(),
            "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 4 20");
  // Capturing a rook on its square removes that right.
  const Position rook_takes = castle->AfterMove(Move{.from = 0, .to = 56});
  EXPECT_EQ(rook_takes.Fen(), "R3k2r/8/8/8/8/8/8/4K2R b Kk - 0 20");
}

TEST(PositionTest, ChessNineSixtyCastling) {
  // King c1, rook a1: queenside castling leaves the king on c1 and puts the
  // rook on d1.
  absl::StatusOr<Position> position =
      Position::FromFen("2k5/8/8/8/8/8/8/R1K5 w A - 0 1");
  ASSERT_TRUE(position.ok()) << position.status();
  const Move queenside{.from = 2, .to = 0, .kind = Move::Kind::kCastling};
  EXPECT_TRUE(position->IsLegal(queenside));
  EXPECT_EQ(position->AfterMove(queenside).Fen(),
            "2k5/8/8/8/8/8/8/2KR4 b - - 1 1");
  // King f1, rook g1: the king lands where the rook stood.
  absl::StatusOr<Position> swap =
      Position::FromFen("5k2/8/8/8/8/8/8/5KR1 w G - 0 1");
  ASSERT_TRUE(swap.ok()) << swap.status();
  const Move swap_castle{.from = 5, .to = 6, .kind = Move::Kind::kCastling};
  EXPECT_TRUE(swap->IsLegal(swap_castle));
  EXPECT_EQ(swap->AfterMove(swap_castle).Fen(),
            "5k2/8/8/8/8/8/8/5RK1 b - - 1 1");
}

}  // namespace
}  // namespace sluice::lc0::chess
