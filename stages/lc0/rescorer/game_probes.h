// The tablebase's answers for the positions of one replayed game, each
// probed at most once. The rescorer's passes ask about the same positions
// more than once (the WDL pass and the plies-left pass, the two DTZ checks
// of one record), and a DTZ probe is the costliest step of rescoring.
//
//   GameProbes probes(replay, tablebase);
//   if (const std::optional<chess::Wdl> wdl = probes.Wdl(k)) ...
#ifndef SLUICE_STAGES_LC0_RESCORER_GAME_PROBES_H_
#define SLUICE_STAGES_LC0_RESCORER_GAME_PROBES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "stages/lc0/chess/syzygy_tablebase.h"
#include "stages/lc0/rescorer/game_replay.h"

namespace sluice::lc0::rescorer {

class GameProbes {
 public:
  // Keeps references to both: they must outlive this object.
  GameProbes(const GameReplay& replay, const chess::SyzygyTablebase& tablebase);

  // The game's replay, as given.
  const GameReplay& replay() const { return replay_; }
  // The tablebase, as given.
  const chess::SyzygyTablebase& tablebase() const { return tablebase_; }

  // Whether position k is one the tables can answer (SyzygyTablebase::
  // CanProbe), decided once.
  bool CanProbe(int k);
  // SyzygyTablebase::ProbeWdl of position k, probed on the first call.
  std::optional<chess::Wdl> Wdl(int k);
  // SyzygyTablebase::ProbeDtz of position k, probed on the first call.
  std::optional<int> Dtz(int k);

 private:
  enum Known : uint8_t {
    kCanProbeKnown = 1,
    kCanProbe = 2,
    kWdlKnown = 4,
    kDtzKnown = 8,
  };

  const GameReplay& replay_;
  const chess::SyzygyTablebase& tablebase_;
  std::vector<uint8_t> known_;
  std::vector<std::optional<chess::Wdl>> wdl_;
  std::vector<std::optional<int>> dtz_;
};

}  // namespace sluice::lc0::rescorer

#endif  // SLUICE_STAGES_LC0_RESCORER_GAME_PROBES_H_
