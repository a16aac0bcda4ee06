#include "stages/lc0/rescorer/game_probes.h"

namespace sluice::lc0::rescorer {

GameProbes::GameProbes(const GameReplay& replay,
                       const chess::SyzygyTablebase& tablebase)
    : replay_(replay),
      tablebase_(tablebase),
      known_(replay.positions.size(), 0),
      wdl_(replay.positions.size()),
      dtz_(replay.positions.size()) {}

bool GameProbes::CanProbe(int k) {
  if (!(known_[k] & kCanProbeKnown)) {
    known_[k] |= kCanProbeKnown;
    if (tablebase_.CanProbe(replay_.positions[k])) known_[k] |= kCanProbe;
  }
  return known_[k] & kCanProbe;
}

std::optional<chess::Wdl> GameProbes::Wdl(int k) {
  if (!(known_[k] & kWdlKnown)) {
    known_[k] |= kWdlKnown;
    if (CanProbe(k)) wdl_[k] = tablebase_.ProbeWdl(replay_.positions[k]);
  }
  return wdl_[k];
}

std::optional<int> GameProbes::Dtz(int k) {
  if (!(known_[k] & kDtzKnown)) {
    known_[k] |= kDtzKnown;
    if (CanProbe(k)) dtz_[k] = tablebase_.ProbeDtz(replay_.positions[k]);
  }
  return dtz_[k];
}

}  // namespace sluice::lc0::rescorer
