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

// Whether `material` names a table ("KRPvKN": white's pieces, then black's,
// one king each, at most 7 pieces).
bool IsTableName(std::string_view material);

// A legal position, white to move, with the material of table `material`
// (IsTableName) in which white has no capture; nullopt when none was
// found.
std::optional<Position> QuietPositionOf(std::string_view material);

// A legal position with the material of table `material`, either side to
// move, drawn from `state` (splitmix64; the same state gives the same
// positions); nullopt when `material` is not a table name or none was
// found.
std::optional<Position> RandomPositionOf(std::string_view material,
                                         uint64_t& state);

enum class TouchResult {
  kTouched,     // fathom parsed the table
  kNotATable,   // not a material fathom knows (e.g. "KvKQ", "foo")
  kNotTouched,  // no quiet position found, or the probe failed
};

// Probes a quiet position of `material` so that fathom parses its WDL
// table now.
TouchResult TouchWdlTable(std::string_view material);

}  // namespace sluice::lc0::chess::internal

#endif  // SLUICE_STAGES_LC0_CHESS_INTERNAL_SYZYGY_FILE_CHECK_H_
