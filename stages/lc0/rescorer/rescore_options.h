// What the rescorer is asked to do to each game, what it counts, and why a
// game is refused.
#ifndef SLUICE_STAGES_LC0_RESCORER_RESCORE_OPTIONS_H_
#define SLUICE_STAGES_LC0_RESCORER_RESCORE_OPTIONS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::lc0::rescorer {

// The options of lc0's rescorer (stages/lc0/rescorer/SPEC.md section 0) and of
// lczero-training's V7 step. Every float is single precision, as there.
struct RescoreOptions {
  // Policy temperature (> 0; 1 leaves the policy alone).
  float temperature = 1.0f;
  // Added to every legal policy entry (<= 0).
  float dist_offset = 0.0f;
  // Probability mass added to the winning moves of minimal DTZ ([0, 1]).
  float dtz_policy_boost = 0.0f;
  // Deblunder: the result of a game with a blunder becomes the value of
  // the best move before it.
  bool deblunder = false;
  float deblunder_threshold = 2.0f;
  float deblunder_width = 0.0f;
  // Re-encode the planes in this input format (1 or 3); -1 keeps them.
  int new_input_format = -1;
  // 6: V6 records, those marked for deletion (invariance bit 6) dropped, as
  // lc0's rescorer writes them. 7: V7 records, all kept, with q_st, d_st,
  // opp_played_idx and next_played_idx, as lczero-training's loader.
  int output_version = 6;
  // The weight of the older value in q_st/d_st (lczero-training's
  // st_q_theta, default 0.8333333333).
  float st_q_theta = 0.8333333333f;
};

// What rescoring did, summed over games.
struct RescoreCounts {
  uint64_t games = 0;
  uint64_t positions = 0;
  // Records whose position was probed for its WDL value.
  uint64_t positions_probed = 0;
  // Records whose result_q or result_d changed.
  uint64_t results_changed = 0;
  // Results that a DTZ probe decided (a proof, or a fifty-move draw).
  uint64_t dtz_decisions = 0;
  // Records where deblunder found a blunder.
  uint64_t blunders = 0;
  // Policy entries that received a DTZ boost.
  uint64_t boosted_entries = 0;
  // Records marked for deletion left out of V6 output.
  uint64_t records_dropped = 0;

  RescoreCounts& operator+=(const RescoreCounts& other);
};

// Why a game is not rescored: `reason` is a stable snake_case key naming
// the check (lc0's where lc0 refuses the game too), `detail` says where.
struct Rejection {
  std::string_view reason;
  std::string detail;
};

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_RESCORE_OPTIONS_H_
