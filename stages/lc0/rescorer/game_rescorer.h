// Rescores one game (one chunk) as Leela Chess Zero's rescorer does
// (stages/lc0/rescorer/SPEC.md): checks the records, replays the game, rescores
// the results from the Syzygy tablebases, adjusts policies, corrects
// plies_left, deblunders, re-encodes the input format, and writes V6 (as
// lc0's program) or V7 records (as lczero-training's loader).
//
//   GameRescorer rescorer(tables, options);
//   std::string out;
//   RescoreCounts counts;
//   if (std::optional<Rejection> r = rescorer.Rescore(records, &out, &counts))
//     CountSkip(r->reason);
//
// Thread-safe: one GameRescorer serves any number of threads at once.
#ifndef SLUICE_STAGES_LC0_RESCORER_GAME_RESCORER_H_
#define SLUICE_STAGES_LC0_RESCORER_GAME_RESCORER_H_

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/recycled_bytes.h"
#include "stages/lc0/chess/syzygy_tablebase.h"
#include "stages/lc0/format/training_record.h"
#include "stages/lc0/rescorer/rescore_options.h"

namespace sluice::lc0::rescorer {

class GameRescorer {
 public:
  GameRescorer(std::shared_ptr<const chess::SyzygyTablebase> tablebase,
               const RescoreOptions& options);

  // Rescores the game whose decompressed records (V3-V7, one version) are
  // `records`. On success appends the output records to `out`; otherwise
  // returns why the game is refused (out unchanged). Reasons: empty_file,
  // unknown_version, size_not_multiple, version_mismatch, those of
  // CheckRecord, ReadResult and ReplayGame, and input_format_not_rescored
  // (formats 2, 4, 5, 132 and 133, which lc0 accepts but sluice does not
  // rescore).
  std::optional<Rejection> Rescore(std::string_view records, std::string* out,
                                   RescoreCounts* counts) const;
  // The same, appending to chunk bytes: the rescored records are written
  // there at once, not copied from a string.
  std::optional<Rejection> Rescore(std::string_view records,
                                   io::RecycledBytes* out,
                                   RescoreCounts* counts) const;
  // The same, replacing `*records` by the output: V6 records rescored into
  // V6 are rewritten where they lie, with no copy in or out (the records
  // kept move down over those dropped); other versions go through Rescore.
  // When the game is refused, `*records` holds unspecified bytes.
  std::optional<Rejection> RescoreInPlace(io::RecycledBytes* records,
                                          RescoreCounts* counts) const;

  const RescoreOptions& options() const { return options_; }

 private:
  // A rescored game, in this thread's scratch space, before it is written
  // out.
  struct RescoredGame {
    std::span<V6TrainingRecord> records;
    // The V7 tails of output version 7.
    std::vector<V7Tail> tails;
    // The bytes WriteOutput writes.
    size_t output_bytes = 0;
  };

  // Rescores `records` (as Rescore) into `game`: in this thread's scratch
  // space, or, when `in_place` (V6 records only), where they lie.
  std::optional<Rejection> RescoreGame(std::string_view records, bool in_place,
                                       RescoredGame* game,
                                       RescoreCounts* counts) const;
  // Rescores records already in the V6 layout that passed CheckRecord, in
  // place (V7 records' first 8356 bytes; version 7 keeps its tail from
  // `v7_tails` when given).
  std::optional<Rejection> RescoreRecords(std::span<V6TrainingRecord> records,
                                          const std::vector<V7Tail>* v7_tails,
                                          RescoredGame* game,
                                          RescoreCounts* counts) const;
  // Writes the output records of `game` (game.output_bytes) at
  // `destination`, which may be where the records lie.
  void WriteOutput(const RescoredGame& game, char* destination) const;
  // Rescore for either kind of output buffer.
  template <typename Bytes>
  std::optional<Rejection> RescoreInto(std::string_view records, Bytes* out,
                                       RescoreCounts* counts) const;

  std::shared_ptr<const chess::SyzygyTablebase> tablebase_;
  RescoreOptions options_;
};

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_GAME_RESCORER_H_
