#include "stages/lc0/chess/internal/fathom_dtz.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "stages/lc0/chess/internal/fathom_board.h"

extern "C" {
#include <tbprobe.h>
}

namespace sluice::lc0::chess::internal {
namespace {

// The position as fathom's table lookup takes it (struct Pos of
// tbprobe.c); SyzygyTablebase's check at load catches a build whose layout
// differs.
struct FathomPosition {
  uint64_t white, black, kings, queens, rooks, bishops, knights, pawns;
  uint8_t rule50;
  uint8_t ep;
  bool turn;
};

// fathom's table kinds (enum { WDL, DTM, DTZ } of tbprobe.c).
constexpr int kDtzTable = 2;

// The DTZ that stands for a WDL value decided by a zeroing move: -1 for a
// loss, -101 for a blessed loss, 0, 101 for a cursed win, 1 for a win.
constexpr int kZeroingDtz[5] = {-1, -101, 0, 101, 1};

int ZeroingDtz(int wdl) { return kZeroingDtz[wdl + 2]; }

FathomPosition ToFathom(const Position& position) {
  const FathomBoard b = ToFathomBoard(position);
  return FathomPosition{.white = b.white,
                        .black = b.black,
                        .kings = b.kings,
                        .queens = b.queens,
                        .rooks = b.rooks,
                        .bishops = b.bishops,
                        .knights = b.knights,
                        .pawns = b.pawns,
                        .rule50 = 0,
                        .ep = 0,
                        .turn = b.turn};
}

// fathom's WDL value (-2..2) of `position`, captures resolved; nullopt
// when its table is missing.
std::optional<int> ProbeWdl(const Position& position) {
  const FathomBoard b = ToFathomBoard(position);
  const unsigned result =
      tb_probe_wdl(b.white, b.black, b.kings, b.queens, b.rooks, b.bishops,
                   b.knights, b.pawns, 0, 0, b.ep, b.turn);
  if (result == TB_RESULT_FAILED) return std::nullopt;
  return static_cast<int>(result) - 2;
}

bool IsCapture(const Position& position, const Move& move) {
  return move.kind == Move::Kind::kEnPassant ||
         (position.occupied() & SquareBit(move.to)) != 0;
}

bool IsPawnMove(const Position& position, const Move& move) {
  return (position.pieces(kPawn) & SquareBit(move.from)) != 0;
}

bool IsMate(const Position& position) {
  return position.InCheck() && position.LegalMoves().size() == 0;
}

}  // namespace

std::optional<FathomDtz> FathomDtz::Find() {
  void* symbol = dlsym(RTLD_DEFAULT, "probe_table");
  if (symbol == nullptr) return std::nullopt;
  return FathomDtz(reinterpret_cast<ProbeTableFunction>(symbol));
}

bool FathomDtz::Handles(const Position& position) {
  if (position.en_passant() < 0) return true;
  for (const Move& move : position.LegalMoves()) {
    if (move.kind == Move::Kind::kEnPassant) return false;
  }
  return true;
}

bool FathomDtz::ParseTable(const Position& position) const {
  const FathomPosition fathom = ToFathom(position);
  int success = 1;  // the lookup only ever lowers it
  probe_table_(&fathom, 1, &success, kDtzTable);
  return success != 0;
}

std::optional<int> FathomDtz::Probe(const Position& position) const {
  const std::optional<int> wdl = ProbeWdl(position);
  if (!wdl) return std::nullopt;
  if (*wdl == 0) return 0;
  const MoveList moves = position.LegalMoves();

  // A capture that reaches the position's value decides it when it wins.
  int best_capture = -3;
  for (const Move& move : moves) {
    if (!IsCapture(position, move)) continue;
    const std::optional<int> after = ProbeWdl(position.AfterMove(move));
    if (!after) return std::nullopt;
    best_capture = std::max(best_capture, -*after);
  }
  if (best_capture > 0 && best_capture == *wdl) return ZeroingDtz(*wdl);

  // So does a winning pawn move.
  if (*wdl > 0) {
    for (const Move& move : moves) {
      if (!IsPawnMove(position, move) || IsCapture(position, move)) continue;
      const std::optional<int> after = ProbeWdl(position.AfterMove(move));
      if (!after) return std::nullopt;
      if (-*after == *wdl) return ZeroingDtz(*wdl);
    }
  }

  const FathomPosition fathom = ToFathom(position);
  int success = 1;  // the lookup only ever lowers it: 0 failed, -1 the
                    // table holds the other side to move
  const int dtz = probe_table_(&fathom, *wdl, &success, kDtzTable);
  if (success == 0) return std::nullopt;
  if (success > 0) return ZeroingDtz(*wdl) + (*wdl > 0 ? dtz : -dtz);

  // The table holds the other side to move: one ply over the moves that do
  // not zero (those were accounted for above).
  int best = *wdl > 0 ? INT_MAX : ZeroingDtz(*wdl);
  for (const Move& move : moves) {
    if (IsCapture(position, move) || IsPawnMove(position, move)) continue;
    const Position after = position.AfterMove(move);
    const std::optional<int> after_dtz = Probe(after);
    if (!after_dtz) return std::nullopt;
    const int value = -*after_dtz;
    if (value == 1 && IsMate(after)) {
      best = 1;
    } else if (*wdl > 0) {
      if (value > 0 && value + 1 < best) best = value + 1;
    } else if (value - 1 < best) {
      best = value - 1;
    }
  }
  return best;
}

}  // namespace sluice::lc0::chess::internal
