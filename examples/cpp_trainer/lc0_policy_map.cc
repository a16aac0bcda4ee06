#include "lc0_policy_map.h"

#include <array>
#include <map>
#include <stdexcept>
#include <tuple>

namespace trainer {
namespace {

struct Step {
  int file;
  int rank;
};
// N, NE, E, SE, S, SW, W, NW.
constexpr std::array<Step, 8> kQueenDirections = {
    {{0, 1}, {1, 1}, {1, 0}, {1, -1}, {0, -1}, {-1, -1}, {-1, 0}, {-1, 1}}};
constexpr std::array<Step, 8> kKnightDirections = {
    {{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}}};
// Promotion planes: NW, N, NE, each rook, bishop, queen.
constexpr std::array<int, 3> kPromotionFiles = {-1, 0, 1};
enum Promotion { kNone, kQueen, kRook, kBishop };
constexpr std::array<Promotion, 3> kPlanePromotions = {kRook, kBishop, kQueen};
constexpr std::array<Promotion, 3> kListPromotions = {kQueen, kRook, kBishop};

bool OnBoard(int file, int rank) {
  return file >= 0 && file < 8 && rank >= 0 && rank < 8;
}

bool QueenOrKnightMove(int from, int to) {
  const int df = to % 8 - from % 8, dr = to / 8 - from / 8;
  if (from == to) return false;
  const int adf = df < 0 ? -df : df, adr = dr < 0 ? -dr : dr;
  const bool queen = df == 0 || dr == 0 || adf == adr;
  const bool knight = (adf == 1 && adr == 2) || (adf == 2 && adr == 1);
  return queen || knight;
}

using Move = std::tuple<int, int, Promotion>;  // from, to, promotion

// lc0's policy indices of every move of its list.
std::map<Move, int> PolicyIndices() {
  std::map<Move, int> index;
  for (int from = 0; from < 64; ++from) {
    for (int to = 0; to < 64; ++to) {
      if (QueenOrKnightMove(from, to)) {
        index.emplace(Move{from, to, kNone}, index.size());
      }
    }
  }
  for (int file = 0; file < 8; ++file) {
    for (int step : kPromotionFiles) {
      if (!OnBoard(file + step, 7)) continue;
      for (Promotion promotion : kListPromotions) {
        index.emplace(Move{6 * 8 + file, 7 * 8 + file + step, promotion},
                      index.size());
      }
    }
  }
  return index;
}

}  // namespace

std::vector<int64_t> ConvPolicyGather() {
  const std::map<Move, int> index = PolicyIndices();
  std::vector<int64_t> gather(kPolicySize, -1);
  auto place = [&](int plane, int from, int file, int rank, Promotion promo) {
    if (!OnBoard(file, rank)) return;
    const auto found = index.find(Move{from, rank * 8 + file, promo});
    if (found == index.end()) return;
    gather.at(found->second) = int64_t{plane} * 64 + from;
  };
  for (int from = 0; from < 64; ++from) {
    const int file = from % 8, rank = from / 8;
    for (int d = 0; d < 8; ++d) {
      const Step step = kQueenDirections[d];
      for (int distance = 1; distance <= 7; ++distance) {
        place(d * 7 + distance - 1, from, file + step.file * distance,
              rank + step.rank * distance, kNone);
      }
      place(56 + d, from, file + kKnightDirections[d].file,
            rank + kKnightDirections[d].rank, kNone);
    }
    if (rank != 6) continue;
    for (int d = 0; d < 3; ++d) {
      for (int p = 0; p < 3; ++p) {
        place(64 + d * 3 + p, from, file + kPromotionFiles[d], 7,
              kPlanePromotions[p]);
      }
    }
  }
  if (index.size() != kPolicySize) {
    throw std::logic_error("lc0 policy map: the move list is not 1858 long");
  }
  for (int64_t position : gather) {
    if (position < 0) throw std::logic_error("lc0 policy map: a move is lost");
  }
  return gather;
}

}  // namespace trainer
