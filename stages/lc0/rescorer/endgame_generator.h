// Synthetic self-play-like games that end in tablebase range (at most four
// pieces), for benchmarks and tests of the rescorer: random legal play from
// the initial position that prefers captures, then a few more moves, as V6
// records of input format 1 that lc0's rescorer accepts (planes, castling,
// policy over the legal moves, played_idx, Q values with an occasional
// blunder, results and plies_left filled like lc0's writer).
//
//   absl::StatusOr<std::string> records = GenerateEndgameGame(seed);
#ifndef SLUICE_STAGES_LC0_RESCORER_ENDGAME_GENERATOR_H_
#define SLUICE_STAGES_LC0_RESCORER_ENDGAME_GENERATOR_H_

#include <cstdint>
#include <string>

namespace sluice::lc0::rescorer {

// The decompressed records of game `seed` (a function of the seed only).
// Games reach at most `max_pieces` pieces and stop within `max_plies`
// records, before mate or stalemate.
std::string GenerateEndgameGame(uint64_t seed, int max_pieces = 4,
                                int max_plies = 400);

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_ENDGAME_GENERATOR_H_
