// The distance to zeroing of one position, probed as Stockfish's and lc0's
// Syzygy code probe it: the WDL value (with captures resolved), a winning
// capture or pawn move, else the DTZ table, else a one-ply search when the
// table holds only the other side to move.
//
// fathom's public API reaches a DTZ table only through tb_probe_root, which
// probes every legal move of the position as well (its job is to pick a
// move), so a DTZ costs a few dozen table probes there. Debian's libfathom
// exports its table lookup (probe_table) without declaring it; this probe
// finds it at run time and uses it for that one lookup, so that a DTZ costs
// one table probe plus the WDL probes of the position's captures and pawn
// moves. SyzygyTablebase checks it against tb_probe_root at load and keeps
// tb_probe_root where the symbol is missing or disagrees.
//
//   std::optional<FathomDtz> dtz = FathomDtz::Find();
//   if (dtz && dtz->ParseTable(position)) ... dtz->Probe(position) ...
#ifndef SLUICE_STAGES_LC0_CHESS_INTERNAL_FATHOM_DTZ_H_
#define SLUICE_STAGES_LC0_CHESS_INTERNAL_FATHOM_DTZ_H_

#include <optional>

#include "stages/lc0/chess/position.h"

namespace sluice::lc0::chess::internal {

class FathomDtz {
 public:
  // The probe, or nullopt when this libfathom does not export its table
  // lookup.
  static std::optional<FathomDtz> Find();

  // Makes fathom parse the DTZ table of `position`'s material now (fathom
  // parses a table on first use without a lock). False when fathom has no
  // DTZ table for it.
  bool ParseTable(const Position& position) const;

  // Whether Probe takes `position`: true unless an en passant capture is
  // legal in it (fathom's WDL value may then come from that capture, and
  // the DTZ with it; tb_probe_root handles those few positions).
  static bool Handles(const Position& position);

  // The DTZ of `position` (Handles; no castling rights, one king each, the
  // side not to move not in check), tb_probe_root's value for it, or
  // nullopt when a table is missing. Thread-safe once every table it
  // reaches is parsed.
  std::optional<int> Probe(const Position& position) const;

 private:
  using ProbeTableFunction = int (*)(const void* position, int wdl,
                                     int* success, int type);

  explicit FathomDtz(ProbeTableFunction probe_table)
      : probe_table_(probe_table) {}

  ProbeTableFunction probe_table_;
};

}  // namespace sluice::lc0::chess::internal

#endif  // SLUICE_STAGES_LC0_CHESS_INTERNAL_FATHOM_DTZ_H_
