// Checks of Syzygy table files before fathom maps them (fathom trusts
// every byte: a truncated or damaged file would make it read outside the
// mapping), and the first probe of each WDL table.
#ifndef SLUICE_STAGES_LC0_CHESS_INTERNAL_SYZYGY_FILE_CHECK_H_
#define SLUICE_STAGES_LC0_CHESS_INTERNAL_SYZYGY_FILE_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "stages/lc0/chess/position.h"

namespace sluice::lc0::chess::internal {

struct SyzygyFileInfo {
  bool wdl = false;  // .rtbw; else .rtbz
  uint64_t size = 0;
};

// Checks the table file at `path` (named *.rtbw or *.rtbz): readable, a
// size of 64k + 16 bytes (the data, then a 16-byte checksum), the magic
// number of its kind and, when `verify_checksum`, the checksum. Errors are
// InvalidArgument and name the file and what is wrong.
absl::StatusOr<SyzygyFileInfo> CheckSyzygyFile(const std::string& path,
                                              bool verify_checksum);

// A legal position, white to move, with the material of table `material`
// ("KRPvKN": white's pieces, then black's) in which white has no capture;
// nullopt when `material` is not a table name of at most 7 pieces or no
// such position was found.
std::optional<Position> QuietPositionOf(std::string_view material);

// Probes a quiet position of `material` so that fathom parses its WDL
// table now. False when that fails.
bool TouchWdlTable(std::string_view material);

}  // namespace sluice::lc0::chess::internal

#endif  // SLUICE_STAGES_LC0_CHESS_INTERNAL_SYZYGY_FILE_CHECK_H_
