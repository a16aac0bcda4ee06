#include "stages/lc0/chess/internal/syzygy_file_check.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "stages/lc0/chess/internal/syzygy_checksum.h"

extern "C" {
#include <tbprobe.h>
}

namespace sluice::lc0::chess::internal {
namespace {

constexpr uint32_t kWdlMagic = 0x5d23e871;
constexpr uint32_t kDtzMagic = 0xa50c66d7;

absl::Status FileError(const std::string& path, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("Syzygy table file '", path, "': ", std::string(what)));
}

// splitmix64: a deterministic sequence for the position search.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

absl::StatusOr<SyzygyFileInfo> CheckSyzygyFile(const std::string& path,
                                               bool verify_checksum) {
  SyzygyFileInfo info;
  info.wdl = path.ends_with(".rtbw");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileError(path, std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return FileError(path, "not a regular file");
  }
  info.size = static_cast<uint64_t>(st.st_size);
  if (info.size < 64 + 16 || info.size % 64 != 16) {
    close(fd);
    return FileError(path, absl::StrCat("size ", info.size,
                                        " is not 64k + 16 bytes (truncated?)"));
  }
  void* data = mmap(nullptr, info.size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (data == MAP_FAILED) {
    return FileError(path, absl::StrCat("mmap: ", std::strerror(errno)));
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  uint32_t magic;
  std::memcpy(&magic, bytes, sizeof(magic));
  absl::Status status;
  if (magic != (info.wdl ? kWdlMagic : kDtzMagic)) {
    status =
        FileError(path, absl::StrCat("not a Syzygy ", info.wdl ? "WDL" : "DTZ",
                                     " table (bad magic number)"));
  } else if (verify_checksum &&
             !SyzygyChecksumMatches(bytes, static_cast<size_t>(info.size))) {
    status = FileError(path, "checksum mismatch (the file is damaged)");
  }
  munmap(data, info.size);
  if (!status.ok()) return status;
  return info;
}

// The pieces of `material`, or nullopt when it is not a table name.
std::optional<std::vector<std::pair<Color, PieceType>>> ParseMaterial(
    std::string_view material) {
  const size_t v = material.find('v');
  if (v == std::string_view::npos || material.size() > 8) return std::nullopt;
  std::vector<std::pair<Color, PieceType>> pieces;
  int kings[2] = {0, 0};
  for (size_t i = 0; i < material.size(); ++i) {
    if (i == v) continue;
    const Color color = i < v ? kWhite : kBlack;
    constexpr std::string_view kLetters = "PNBRQK";
    const size_t type = kLetters.find(material[i]);
    if (type == std::string_view::npos) return std::nullopt;
    pieces.emplace_back(color, static_cast<PieceType>(type));
    kings[color] += type == kKing;
  }
  if (kings[0] != 1 || kings[1] != 1) return std::nullopt;
  return pieces;
}

bool IsTableName(std::string_view material) {
  return ParseMaterial(material).has_value();
}

namespace {

// The pieces placed on random squares (pawns on ranks 2-7) with `mover` to
// move, or nullopt when a piece found no free square or the side not to
// move is in check.
std::optional<Position> PlacePieces(
    const std::vector<std::pair<Color, PieceType>>& pieces, Color mover,
    uint64_t& state) {
  Position position;
  for (const auto& [color, type] : pieces) {
    const int low = type == kPawn ? 8 : 0;
    const int span = type == kPawn ? 48 : 64;
    int square = -1;
    for (int tries = 0; tries < 64 && square < 0; ++tries) {
      const int candidate = low + static_cast<int>(NextRandom(state) % span);
      if (!(position.occupied() & SquareBit(candidate))) square = candidate;
    }
    if (square < 0) return std::nullopt;
    position.Put(color, type, square);
  }
  position.set_side_to_move(mover);
  const Color waiting = mover == kWhite ? kBlack : kWhite;
  if (position.IsAttacked(position.KingSquare(waiting), mover)) {
    return std::nullopt;
  }
  return position;
}

}  // namespace

std::optional<Position> QuietPositionOf(std::string_view material) {
  const auto parsed = ParseMaterial(material);
  if (!parsed) return std::nullopt;
  uint64_t state = 0x5359'5a59'4759ull;
  for (int attempt = 0; attempt < 100000; ++attempt) {
    const std::optional<Position> position =
        PlacePieces(*parsed, kWhite, state);
    if (!position) continue;
    bool quiet = true;
    for (const Move& move : position->LegalMoves()) {
      if (position->IsZeroing(move) &&
          (position->pieces(kBlack) & SquareBit(move.to))) {
        quiet = false;
        break;
      }
    }
    if (quiet) return position;
  }
  return std::nullopt;
}

std::optional<Position> RandomPositionOf(std::string_view material,
                                         uint64_t& state) {
  const auto parsed = ParseMaterial(material);
  if (!parsed) return std::nullopt;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const Color mover = NextRandom(state) % 2 == 0 ? kWhite : kBlack;
    if (std::optional<Position> position = PlacePieces(*parsed, mover, state)) {
      return position;
    }
  }
  return std::nullopt;
}

TouchResult TouchWdlTable(std::string_view material) {
  if (!IsTableName(material)) return TouchResult::kNotATable;
  const std::optional<Position> position = QuietPositionOf(material);
  if (!position) return TouchResult::kNotTouched;
  const unsigned result = tb_probe_wdl(
      position->pieces(kWhite), position->pieces(kBlack),
      position->pieces(kKing), position->pieces(kQueen),
      position->pieces(kRook), position->pieces(kBishop),
      position->pieces(kKnight), position->pieces(kPawn), 0, 0, 0, true);
  return result != TB_RESULT_FAILED ? TouchResult::kTouched
                                    : TouchResult::kNotTouched;
}

}  // namespace sluice::lc0::chess::internal
