// Syzygy endgame tablebases through libfathom (MIT): win/draw/loss and
// distance-to-zeroing probes, and the ranking of root moves, with the
// semantics of Stockfish's and lc0's Syzygy code (capture resolution, en
// passant, cursed wins and blessed losses).
//
// fathom keeps one set of tables per process in global state, maps each
// table file (the page cache holds it once, shared by every thread and
// process) and parses a table when it is first probed, without a lock in
// Debian's build. Load() therefore:
//  - checks every table file fathom would open (the first directory that
//    holds a name wins): size, magic number and, unless told not to, the
//    checksum every Syzygy file ends with; a damaged file is an error that
//    names it, never a crash later;
//  - initialises fathom once, and parses every WDL and DTZ table at once,
//    before any concurrent use, so that probes need no lock (a table that
//    could not be parsed so makes the probes that may reach it take a
//    mutex).
// A DTZ probe reaches fathom's DTZ table lookup directly when the library
// exports it (internal/fathom_dtz.h), checked at load against fathom's
// root probe, which is a few dozen times slower.
// A Load() with the same paths shares the loaded tables; a Load() with
// other paths while tables are in use is an error.
//
//   auto tables = SyzygyTablebase::Load({"/syzygy/345", "/syzygy/6"});
//   std::optional<Wdl> wdl = (*tables)->ProbeWdl(position);
#ifndef SLUICE_STAGES_LC0_CHESS_SYZYGY_TABLEBASE_H_
#define SLUICE_STAGES_LC0_CHESS_SYZYGY_TABLEBASE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "stages/lc0/chess/position.h"

namespace sluice::lc0::chess {
namespace internal {
class FathomDtz;
}  // namespace internal

// Win/draw/loss for the side to move; cursed wins and blessed losses are
// wins and losses that the fifty-move rule turns into draws.
enum class Wdl : int8_t {
  kLoss = -2,
  kBlessedLoss = -1,
  kDraw = 0,
  kCursedWin = 1,
  kWin = 2
};

// A legal move of a probed root position and its rank (higher is better):
// see RankRootMoves.
struct RankedMove {
  Move move;
  int rank = 0;
};

struct SyzygyLoadOptions {
  // Verify each table file's embedded checksum (reads every byte once).
  bool verify_checksums = true;
  // Probe DTZ through fathom's table lookup when it passed the check at
  // load (false: always through fathom's root probe, which gives the same
  // values, slower).
  bool direct_dtz = true;
};

class SyzygyTablebase {
 public:
  // Loads the tables under `paths` (directories, searched in order).
  // Errors: InvalidArgument naming a path that is not a readable directory
  // or a table file that is truncated, not a Syzygy table or damaged;
  // NotFound when no WDL table is found; FailedPrecondition when another
  // set of tables is in use in this process.
  static absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> Load(
      const std::vector<std::string>& paths,
      const SyzygyLoadOptions& options = {});

  ~SyzygyTablebase();
  SyzygyTablebase(const SyzygyTablebase&) = delete;
  SyzygyTablebase& operator=(const SyzygyTablebase&) = delete;

  // The most pieces (kings included) of any WDL table loaded.
  int max_cardinality() const { return max_cardinality_; }
  int wdl_tables() const { return wdl_tables_; }
  int dtz_tables() const { return dtz_tables_; }
  // Bytes of the table files loaded (mapped, shared through the page
  // cache; only the pages probed are read).
  uint64_t mapped_bytes() const { return mapped_bytes_; }
  // Whether DTZ probes use fathom's table lookup (SyzygyLoadOptions::
  // direct_dtz, when this libfathom has it and it passed the check).
  bool probes_dtz_directly() const { return direct_dtz_ != nullptr; }

  // Whether `position` can be probed: no castling right for either side,
  // one king each, at most max_cardinality() pieces, and the side not to
  // move not in check.
  bool CanProbe(const Position& position) const;

  // The WDL value of `position` for its side to move, or nullopt when the
  // probe fails (no table for its material, or not CanProbe). Thread-safe.
  std::optional<Wdl> ProbeWdl(const Position& position) const;

  // The distance to zeroing in plies for the side to move: positive when
  // winning, negative when losing, 0 for a draw, -1 when mated, beyond
  // +-100 for cursed wins and blessed losses (Syzygy semantics: may be one
  // ply off). nullopt when the probe fails. Thread-safe.
  std::optional<int> ProbeDtz(const Position& position) const;

  // Ranks every legal move of `position` by its DTZ counted from the root:
  // a winning move ranks 1000 - (dtz + rule50) (or 1000 when the win is
  // certain within the fifty-move rule and `has_repeated` is false), a
  // draw 0, a losing move below 0. False when a probe fails. Thread-safe.
  bool RankRootMoves(const Position& position, bool has_repeated,
                     std::vector<RankedMove>* moves) const;

 private:
  SyzygyTablebase() = default;

  std::string path_string_;
  int max_cardinality_ = 0;
  int wdl_tables_ = 0;
  int dtz_tables_ = 0;
  uint64_t mapped_bytes_ = 0;
  // Some WDL table was not parsed at load: WDL probes take the mutex.
  bool serialize_wdl_ = false;
  // Some table a DTZ probe may reach was not parsed at load: DTZ probes
  // take the mutex.
  bool serialize_dtz_ = true;
  // The single-position DTZ probe (fathom's global state holds it), or
  // null: tb_probe_root.
  const internal::FathomDtz* direct_dtz_ = nullptr;
  // Counted among fathom's users (a successful Load).
  bool counted_ = false;
};

}  // namespace sluice::lc0::chess

#endif  // SLUICE_STAGES_LC0_CHESS_SYZYGY_TABLEBASE_H_
