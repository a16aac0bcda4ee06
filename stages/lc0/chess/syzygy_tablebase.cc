#include "stages/lc0/chess/syzygy_tablebase.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "stages/lc0/chess/internal/fathom_board.h"
#include "stages/lc0/chess/internal/fathom_dtz.h"
#include "stages/lc0/chess/internal/syzygy_file_check.h"

extern "C" {
#include <tbprobe.h>
}

namespace sluice::lc0::chess {
namespace {

// fathom's global state: which paths it was initialised with and how many
// SyzygyTablebase objects use it.
struct FathomState {
  std::mutex mutex;
  std::string paths;
  int users = 0;
  // Serialises probes that may parse a table on first use: DTZ probes
  // unless every DTZ table was parsed at load, and WDL probes too when some
  // WDL table could not be.
  std::mutex dtz_mutex;
  bool serialize_wdl = false;
  bool dtz_tables_parsed = false;
  // The single-position DTZ probe, when found and in agreement with
  // tb_probe_root.
  std::optional<internal::FathomDtz> direct_dtz;
};

FathomState& State() {
  static FathomState* state = new FathomState;
  return *state;
}

using internal::FathomBoard;
using internal::ToFathomBoard;

Move FromFathomMove(const Position& position, unsigned tb_move) {
  Move move{.from = static_cast<uint8_t>(TB_MOVE_FROM(tb_move)),
            .to = static_cast<uint8_t>(TB_MOVE_TO(tb_move))};
  switch (TB_MOVE_PROMOTES(tb_move)) {
    case TB_PROMOTES_QUEEN:
      move.promotion = kQueen;
      break;
    case TB_PROMOTES_ROOK:
      move.promotion = kRook;
      break;
    case TB_PROMOTES_BISHOP:
      move.promotion = kBishop;
      break;
    case TB_PROMOTES_KNIGHT:
      move.promotion = kKnight;
      break;
    default:
      break;
  }
  if (move.promotion != kPawn) {
    move.kind = Move::Kind::kPromotion;
  } else if ((position.pieces(kPawn) & SquareBit(move.from)) &&
             FileOf(move.from) != FileOf(move.to) &&
             !(position.occupied() & SquareBit(move.to))) {
    move.kind = Move::Kind::kEnPassant;
  }
  return move;
}

// The table files under `paths` that fathom would open: for each name, the
// file in the first directory that holds it.
absl::StatusOr<std::map<std::string, std::string>> FindTableFiles(
    const std::vector<std::string>& paths) {
  std::map<std::string, std::string> files;
  for (const std::string& path : paths) {
    DIR* dir = opendir(path.c_str());
    if (dir == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "syzygy path '", path,
          "' is not a readable directory: ", std::strerror(errno)));
    }
    while (const dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name.size() < 6) continue;
      const std::string suffix = name.substr(name.size() - 5);
      if (suffix != ".rtbw" && suffix != ".rtbz") continue;
      files.emplace(name, path + "/" + name);
    }
    closedir(dir);
  }
  return files;
}

// tb_probe_root's DTZ of `position` (ProbeDtz's contract), or nullopt
// when a probe fails.
std::optional<int> RootDtz(const Position& position) {
  const FathomBoard b = ToFathomBoard(position);
  const unsigned result =
      tb_probe_root(b.white, b.black, b.kings, b.queens, b.rooks, b.bishops,
                    b.knights, b.pawns, 0, 0, b.ep, b.turn, nullptr);
  if (result == TB_RESULT_FAILED) return std::nullopt;
  if (result == TB_RESULT_CHECKMATE) return -1;
  if (result == TB_RESULT_STALEMATE) return 0;
  const int dtz = static_cast<int>(TB_GET_DTZ(result));
  const unsigned wdl = TB_GET_WDL(result);
  return wdl == TB_DRAW ? 0 : (wdl > TB_DRAW ? dtz : -dtz);
}

// Parses every DTZ table of `materials` through FathomDtz, when this
// libfathom has it, and checks FathomDtz against tb_probe_root on random
// positions of those tables (at most 512); sets state.dtz_tables_parsed
// and state.direct_dtz accordingly. Runs before any concurrent probe.
void PrepareDtzProbes(const std::vector<std::string>& materials,
                      FathomState& state) {
  state.dtz_tables_parsed = false;
  state.direct_dtz.reset();
  const std::optional<internal::FathomDtz> direct = internal::FathomDtz::Find();
  if (!direct) return;
  bool parsed = true;
  uint64_t random = 0x445a'5450'524f'4245ull;
  for (const std::string& material : materials) {
    const std::optional<Position> position =
        internal::RandomPositionOf(material, random);
    if (!position) {
      parsed = false;
      continue;
    }
    direct->ParseTable(*position);
  }
  state.dtz_tables_parsed = parsed;
  constexpr int kChecks = 512;
  int checked = 0;
  for (int round = 0; round < 16 && checked < kChecks; ++round) {
    for (const std::string& material : materials) {
      if (checked == kChecks) break;
      const std::optional<Position> position =
          internal::RandomPositionOf(material, random);
      if (!position) continue;
      if (direct->Probe(*position) != RootDtz(*position)) return;
      ++checked;
    }
  }
  state.direct_dtz = direct;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> SyzygyTablebase::Load(
    const std::vector<std::string>& paths, const SyzygyLoadOptions& options) {
  if (paths.empty()) {
    return absl::InvalidArgumentError("no syzygy path given");
  }
  for (const std::string& path : paths) {
    if (path.empty() || path.find(':') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("syzygy path '", path,
                       "' is empty or holds ':' (give one directory per "
                       "entry)"));
    }
  }
  absl::StatusOr<std::map<std::string, std::string>> files =
      FindTableFiles(paths);
  if (!files.ok()) return files.status();
  auto tables = std::shared_ptr<SyzygyTablebase>(new SyzygyTablebase);
  std::vector<std::string> wdl_materials;
  std::vector<std::string> dtz_materials;
  for (const auto& [name, file] : *files) {
    absl::StatusOr<internal::SyzygyFileInfo> info =
        internal::CheckSyzygyFile(file, options.verify_checksums);
    if (!info.ok()) return info.status();
    tables->mapped_bytes_ += info->size;
    if (info->wdl) {
      ++tables->wdl_tables_;
      wdl_materials.push_back(name.substr(0, name.size() - 5));
    } else {
      ++tables->dtz_tables_;
      dtz_materials.push_back(name.substr(0, name.size() - 5));
    }
  }
  if (tables->wdl_tables_ == 0) {
    return absl::NotFoundError(absl::StrCat("no Syzygy WDL table (*.rtbw) in ",
                                            absl::StrJoin(paths, ", ")));
  }
  tables->path_string_ = absl::StrJoin(paths, ":");

  FathomState& state = State();
  std::lock_guard lock(state.mutex);
  if (state.users > 0 && state.paths != tables->path_string_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Syzygy tables from '", state.paths,
        "' are in use in this process; fathom holds one set at a time, so '",
        tables->path_string_, "' cannot be loaded beside them"));
  }
  if (state.users == 0 && state.paths != tables->path_string_) {
    if (!tb_init(tables->path_string_.c_str())) {
      return absl::InternalError(
          absl::StrCat("fathom failed to load '", tables->path_string_, "'"));
    }
    state.paths = tables->path_string_;
    // Parse every WDL table now, before any concurrent probe; a table that
    // could not be reached so makes every probe take the mutex.
    state.serialize_wdl = false;
    for (const std::string& material : wdl_materials) {
      if (internal::TouchWdlTable(material) ==
          internal::TouchResult::kNotTouched) {
        state.serialize_wdl = true;
      }
    }
    PrepareDtzProbes(dtz_materials, state);
  }
  tables->max_cardinality_ = static_cast<int>(TB_LARGEST);
  tables->serialize_wdl_ = state.serialize_wdl;
  tables->serialize_dtz_ = state.serialize_wdl || !state.dtz_tables_parsed;
  tables->direct_dtz_ =
      options.direct_dtz && state.direct_dtz ? &*state.direct_dtz : nullptr;
  tables->counted_ = true;
  ++state.users;
  return std::shared_ptr<const SyzygyTablebase>(std::move(tables));
}

SyzygyTablebase::~SyzygyTablebase() {
  if (!counted_) return;
  FathomState& state = State();
  std::lock_guard lock(state.mutex);
  --state.users;
}

bool SyzygyTablebase::CanProbe(const Position& position) const {
  // fathom asserts on a position whose side not to move is in check (its
  // king could be taken): such a position is not probed.
  if (position.has_castling_rights() ||
      position.piece_count() > max_cardinality_ ||
      PopCount(position.pieces(kWhite, kKing)) != 1 ||
      PopCount(position.pieces(kBlack, kKing)) != 1) {
    return false;
  }
  const Color mover = position.side_to_move();
  const Color waiting = mover == kWhite ? kBlack : kWhite;
  return !position.IsAttacked(position.KingSquare(waiting), mover);
}

std::optional<Wdl> SyzygyTablebase::ProbeWdl(const Position& position) const {
  if (!CanProbe(position)) return std::nullopt;
  const FathomBoard b = ToFathomBoard(position);
  auto probe = [&] {
    return tb_probe_wdl(b.white, b.black, b.kings, b.queens, b.rooks, b.bishops,
                        b.knights, b.pawns, 0, 0, b.ep, b.turn);
  };
  unsigned result;
  if (serialize_wdl_) {
    std::lock_guard lock(State().dtz_mutex);
    result = probe();
  } else {
    result = probe();
  }
  if (result == TB_RESULT_FAILED) return std::nullopt;
  return static_cast<Wdl>(static_cast<int>(result) - 2);
}

std::optional<int> SyzygyTablebase::ProbeDtz(const Position& position) const {
  if (!CanProbe(position)) return std::nullopt;
  auto probe = [&] {
    return direct_dtz_ != nullptr && internal::FathomDtz::Handles(position)
               ? direct_dtz_->Probe(position)
               : RootDtz(position);
  };
  if (serialize_dtz_) {
    std::lock_guard lock(State().dtz_mutex);
    return probe();
  }
  return probe();
}

bool SyzygyTablebase::RankRootMoves(const Position& position, bool has_repeated,
                                    std::vector<RankedMove>* moves) const {
  moves->clear();
  if (!CanProbe(position)) return false;
  const FathomBoard b = ToFathomBoard(position);
  auto root_moves = std::make_unique<TbRootMoves>();
  auto probe = [&] {
    return tb_probe_root_dtz(
        b.white, b.black, b.kings, b.queens, b.rooks, b.bishops, b.knights,
        b.pawns, static_cast<unsigned>(position.rule50()), 0, b.ep, b.turn,
        has_repeated, /*useRule50=*/true, root_moves.get());
  };
  int ok;
  if (serialize_dtz_) {
    std::lock_guard lock(State().dtz_mutex);
    ok = probe();
  } else {
    ok = probe();
  }
  if (!ok) return false;
  for (unsigned i = 0; i < root_moves->size; ++i) {
    moves->push_back(
        RankedMove{.move = FromFathomMove(position, root_moves->moves[i].move),
                   .rank = root_moves->moves[i].tbRank});
  }
  return true;
}

}  // namespace sluice::lc0::chess
