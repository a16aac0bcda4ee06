// Reconstructs a game from its training records, as lc0's rescorer does:
// record 0's planes give the first position; every later position comes
// from replaying the move found by comparing consecutive records (the
// pieces of the side that moved, before and after). Each move is checked
// against the record it was played from (played_idx, its probability,
// legality). Counters, castling rights and en passant after record 0 come
// from the rules, not from the records.
//
//   GameReplay replay;
//   if (std::optional<Rejection> rejection = ReplayGame(records, &replay)) {
//     ...;  // skip the game
//   }
//   const chess::Position& position = replay.positions[k];
#ifndef SLUICE_STAGES_LC0_RESCORER_GAME_REPLAY_H_
#define SLUICE_STAGES_LC0_RESCORER_GAME_REPLAY_H_

#include <optional>
#include <span>
#include <vector>

#include "stages/lc0/chess/position.h"
#include "stages/lc0/format/training_record.h"
#include "stages/lc0/rescorer/rescore_options.h"

namespace sluice::lc0::rescorer {

struct GameReplay {
  // positions[k]: the position of record k. Canonical formats replay the
  // game as if record 0 had white to move (the colours as stored).
  std::vector<chess::Position> positions;
  // moves[k]: the move from record k to record k + 1.
  std::vector<chess::Move> moves;
  // repetitions[k]: how often positions[k] occurred before (lc0's count,
  // looking back no further than the last zeroing move or record 0).
  std::vector<int> repetitions;

  // True when none of the last rule50 positions up to record k (k itself
  // included) is a repetition and the replay holds at least that many.
  bool NoRepetitionWithinRule50(int k) const;
};

// The position of `record` on its own (record 0 of a game). Rejects a
// position without exactly one king per side, with a pawn on the first or
// last rank, or with the side not to move in check.
std::optional<Rejection> PositionOfRecord(const V6TrainingRecord& record,
                                          chess::Position* position);

// The replay of `moves` (legal, in order) from `start`, for tools that
// make games rather than read them.
GameReplay ReplayMoves(const chess::Position& start,
                       std::span<const chess::Move> moves);

// Replays `records` (at least one) into `replay`; or the reason the game is
// refused: played_move_illegal (no legal move fits the planes),
// played_move_not_listed (played_idx is another move's),
// played_move_marked_illegal, invalid_position.
std::optional<Rejection> ReplayGame(std::span<const V6TrainingRecord> records,
                                    GameReplay* replay);

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_GAME_REPLAY_H_
