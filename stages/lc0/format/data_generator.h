// Synthetic lc0 training data: realistic, reproducible self-play games for
// tests, demos and benchmarks (the `sluice gen` command).
//
// A game is simulated on a toy board: pieces move by their (pseudo-legal)
// moves, capture, castle and promote; each position becomes one record with
// 8 history steps of 13 planes seen from the side to move (board mirrored
// when black moves, as lc0 does), a visit-count policy over 20-40 legal move
// indices (-1 elsewhere), q/d drifting towards the game result, and
// decreasing plies_left. Records are V6, or V3/V4/V5 (the V6 record cut to
// the older layout, the inverse of the up-conversion in FORMAT.md).
//
//   GeneratorOptions options{.seed = 7, .version = 6, .input_format = 3};
//   SLUICE_ASSIGN_OR_RETURN(std::string chunk, GenerateGame(options, 0));
//   SLUICE_ASSIGN_OR_RETURN(
//       GeneratedFiles files,
//       WriteGames(options, {.mode = OutputMode::kTar, .dir = "/tmp/data",
//                            .games = 1000, .games_per_tar = 100}));
//
// Everything is a pure function of the options: the same seed gives
// byte-identical files (gzip with mtime 0, tar headers with fixed times).
#ifndef SLUICE_STAGES_LC0_FORMAT_DATA_GENERATOR_H_
#define SLUICE_STAGES_LC0_FORMAT_DATA_GENERATOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice::lc0 {

// Game lengths, in positions (records) per game.
inline constexpr int kMinGamePositions = 60;
inline constexpr int kMaxGamePositions = 250;
// Legal moves per position carrying a policy value.
inline constexpr int kMinLegalMoves = 20;
inline constexpr int kMaxLegalMoves = 40;
// Chunk names are training.<kFirstGameId + game index>.gz: ids of equal
// width, so names sort in game order.
inline constexpr uint64_t kFirstGameId = 100'000'000;

// What records to generate.
struct GeneratorOptions {
  uint64_t seed = 1;
  int version = 6;       // 3, 4, 5 or 6
  int input_format = 1;  // 1 (classical) or 3; 3 needs version >= 5
};

// OK when the options name a supported version / input format pair.
absl::Status ValidateGeneratorOptions(const GeneratorOptions& options);

// The uncompressed chunk of game `game_index`: 60-250 records of the chosen
// version back to back. Depends only on (options, game_index).
absl::StatusOr<std::string> GenerateGame(const GeneratorOptions& options,
                                         uint64_t game_index);

// `raw` as a gzip stream (zlib's default level, like lc0; mtime 0), so equal
// input gives equal bytes.
absl::StatusOr<std::string> GzipChunk(std::string_view raw);

// Where and how to write games.
enum class OutputMode {
  kLoose,  // one training.<id>.gz per game
  kTar,    // plain ustar archives of training.<id>.gz members
};
struct OutputOptions {
  OutputMode mode = OutputMode::kLoose;
  std::string dir;  // created when missing
  int games = 1;
  // Index of the first game written (games first_game .. first_game +
  // games - 1), so several writers can split one data set; in tar mode a
  // multiple of games_per_tar keeps archives whole.
  int first_game = 0;
  // Tar mode: games per archive. Archives are named
  // training-run1-test80-YYYYMMDD-HHMM.tar, one hour apart from
  // 2025-01-01 00:00 UTC, so names sort chronologically.
  int games_per_tar = 100;
};

// What WriteGames produced.
struct GeneratedFiles {
  std::vector<std::string> paths;  // in write (and name) order
  uint64_t games = 0;
  uint64_t positions = 0;
  uint64_t raw_bytes = 0;         // uncompressed record bytes
  uint64_t compressed_bytes = 0;  // bytes of the .gz chunks
  uint64_t file_bytes = 0;        // bytes written (tar headers included)
};

// Writes `output.games` games (from index output.first_game). Each file appears
// atomically: written under a hidden temporary name in the same directory,
// then renamed. Fails on bad options or I/O errors.
absl::StatusOr<GeneratedFiles> WriteGames(const GeneratorOptions& options,
                                          const OutputOptions& output);

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_DATA_GENERATOR_H_
