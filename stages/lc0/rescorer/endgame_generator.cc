#include "stages/lc0/rescorer/endgame_generator.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "engine/stable_hash.h"
#include "stages/lc0/chess/policy_index.h"
#include "stages/lc0/format/training_record.h"
#include "stages/lc0/rescorer/game_replay.h"
#include "stages/lc0/rescorer/input_format_conversion.h"

namespace sluice::lc0::rescorer {
namespace {

using chess::Move;
using chess::MoveList;
using chess::Position;

double Unit(StableRandom& random) {
  return static_cast<double>(random.Next() >> 11) * 0x1.0p-53;
}

// A random legal move of `position`, a capture with probability 0.8 when
// there is one.
Move PickMove(const Position& position, const MoveList& moves,
              StableRandom& random) {
  std::vector<Move> captures;
  for (const Move& move : moves) {
    if (position.IsZeroing(move) &&
        (position.pieces(chess::Opponent(position.side_to_move())) &
         chess::SquareBit(move.to))) {
      captures.push_back(move);
    }
  }
  if (!captures.empty() && Unit(random) < 0.8) {
    return captures[random.Next() % captures.size()];
  }
  return moves[static_cast<int>(random.Next() % moves.size())];
}

}  // namespace

std::string GenerateEndgameGame(uint64_t seed, int max_pieces, int max_plies) {
  StableRandom random(HashCombine(seed, 0x656e6467616d65ull));
  const Position start = *Position::FromFen(chess::kStartFen);
  std::vector<Move> moves;
  Position position = start;
  int extra = -1;  // plies still to play once in tablebase range
  while (static_cast<int>(moves.size()) + 1 < max_plies) {
    const MoveList legal = position.LegalMoves();
    if (legal.size() == 0 || position.rule50() >= 99) break;
    const Move move = PickMove(position, legal, random);
    const Position next = position.AfterMove(move);
    if (next.LegalMoves().size() == 0) break;  // no mate or stalemate
    moves.push_back(move);
    position = next;
    if (extra < 0 && position.piece_count() <= max_pieces) {
      extra = 4 + static_cast<int>(random.Next() % 40);
    }
    if (extra >= 0 && extra-- == 0) break;
  }
  const GameReplay replay = ReplayMoves(start, moves);
  const int n = static_cast<int>(replay.positions.size());
  std::vector<V6TrainingRecord> records(n);
  const int result = static_cast<int>(random.Next() % 3) - 1;  // white's view
  for (int k = 0; k < n; ++k) {
    const Position& now = replay.positions[k];
    V6TrainingRecord& record = records[k];
    std::memset(&record, 0, sizeof(record));
    record.version = 6;
    record.input_format = 1;
    for (float& p : record.probabilities) p = -1.0f;
    const MoveList legal = now.LegalMoves();
    const Move played =
        k + 1 < n ? replay.moves[k]
                  : legal[static_cast<int>(random.Next() % legal.size())];
    const bool black = now.side_to_move() == chess::kBlack;
    float sum = 0;
    std::vector<float> weights;
    for (int i = 0; i < legal.size(); ++i) {
      weights.push_back(static_cast<float>(0.05 + Unit(random)));
      sum += weights.back();
    }
    for (int i = 0; i < legal.size(); ++i) {
      record.probabilities[chess::PolicyIndex(legal[i], black, 0)] =
          weights[i] / sum;
    }
    record.played_idx =
        static_cast<uint16_t>(chess::PolicyIndex(played, black, 0));
    record.best_idx = record.played_idx;
    const float q = static_cast<float>(std::tanh(2 * (Unit(random) - 0.5)));
    // About one move in twenty falls short of the best by more than 0.1.
    const float loss = Unit(random) < 0.05
                           ? static_cast<float>(0.1 + 0.3 * Unit(random))
                           : static_cast<float>(0.02 * Unit(random));
    record.best_q = record.root_q = q;
    record.played_q = std::max(-1.0f, q - loss);
    record.best_d = record.root_d = record.played_d = 0.2f;
    record.plies_left = static_cast<float>(n - k);
    record.best_m = record.root_m = record.played_m = record.plies_left;
    const int side_result = black ? -result : result;
    record.result_q = static_cast<float>(side_result);
    record.result_d = side_result == 0 ? 1.0f : 0.0f;
    record.orig_q = record.orig_d = record.orig_m = NAN;
    record.visits = 100 + static_cast<uint32_t>(random.Next() % 800);
    record.rule50_count = static_cast<uint8_t>(std::min(now.rule50(), 100));
  }
  ConvertInputFormat(replay, 1, records);
  return std::string(reinterpret_cast<const char*>(records.data()),
                     records.size() * sizeof(V6TrainingRecord));
}

}  // namespace sluice::lc0::rescorer
