#include "stages/lc0/format/data_generator.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "engine/status_macros.h"
#include "stages/lc0/format/internal/file_output.h"
#include "stages/lc0/format/internal/toy_board.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {
namespace {

using internal::Rng;
using internal::ToyBoard;
using internal::ToyMove;

constexpr int kHistorySteps = 8;
constexpr int kPlanesPerStep = 13;

uint64_t Mix(uint64_t x) { return Rng(x).Next(); }

size_t RecordBytes(int version) {
  switch (version) {
    case 3:
      return kV3RecordSize;
    case 4:
      return kV4RecordSize;
    case 5:
      return kV5RecordSize;
    default:
      return kV6RecordSize;
  }
}

// A q/d pair kept valid: d in [0, 1], |q| <= 1 - d.
void ClampValue(double& q, double& d) {
  d = std::clamp(d, 0.0, 1.0);
  q = std::clamp(q, d - 1.0, 1.0 - d);
}

struct HistoryEntry {
  ToyBoard board;
  bool repeated = false;
};

// Bit planes and meta fields of the newest position in `history`, seen from
// its side to move. Format 3 (canonical) history stops after the last
// position reached by a capture or pawn move, as lc0 encodes it.
void EncodePosition(const std::deque<HistoryEntry>& history, int input_format,
                    V6TrainingRecord& record) {
  const ToyBoard& now = history.back().board;
  const bool flip = now.black_to_move();
  for (int step = 0;
       step < kHistorySteps && step < static_cast<int>(history.size());
       ++step) {
    const HistoryEntry& entry = history[history.size() - 1 - step];
    uint64_t* planes = record.planes + step * kPlanesPerStep;
    for (int square = 0; square < 64; ++square) {
      const int piece = entry.board.at(square);
      if (piece == 0) continue;
      const bool ours = (piece > 0) != flip;
      const int plane = (ours ? 0 : 6) + std::abs(piece) - 1;
      const int seen = flip ? square ^ 56 : square;
      planes[plane] |= uint64_t{1} << (seen ^ 7);
    }
    if (entry.repeated) planes[12] = ~uint64_t{0};
    if (input_format == 3 && entry.board.rule50() == 0) break;
  }
  const std::array<bool, 4>& castling = now.castling();  // wOOO wOO bOOO bOO
  const bool us_ooo = castling[flip ? 2 : 0], us_oo = castling[flip ? 3 : 1];
  const bool them_ooo = castling[flip ? 0 : 2];
  const bool them_oo = castling[flip ? 1 : 3];
  if (input_format == 1) {
    record.castling_us_ooo = us_ooo;
    record.castling_us_oo = us_oo;
    record.castling_them_ooo = them_ooo;
    record.castling_them_oo = them_oo;
    record.side_to_move_or_enpassant = flip;
  } else {  // rook files as bit rows; en-passant file as a bit
    record.castling_us_ooo = us_ooo ? 0x01 : 0;
    record.castling_us_oo = us_oo ? 0x80 : 0;
    record.castling_them_ooo = them_ooo ? 0x01 : 0;
    record.castling_them_oo = them_oo ? 0x80 : 0;
    const int file = now.en_passant_file();
    record.side_to_move_or_enpassant = file >= 0 ? 1 << file : 0;
  }
  record.rule50_count = static_cast<uint8_t>(std::min(now.rule50(), 255));
  record.invariance_info = flip ? 0x80 : 0;  // side to move; no transform
}

// Evolves one side's legal-move policy indices a little per move, as the
// legal moves of consecutive positions overlap.
void EvolveLegalMoves(Rng& rng, std::vector<int>& indices) {
  auto add_fresh = [&] {
    int index;
    do {
      index = rng.Uniform(0, kPolicySize - 1);
    } while (std::find(indices.begin(), indices.end(), index) != indices.end());
    indices.push_back(index);
  };
  const int target =
      std::clamp(static_cast<int>(indices.size()) + rng.Uniform(-3, 3),
                 kMinLegalMoves, kMaxLegalMoves);
  for (int replaced = rng.Uniform(1, 5); replaced > 0 && !indices.empty();
       --replaced) {
    indices.erase(indices.begin() + rng.Uniform(0, indices.size() - 1));
  }
  while (static_cast<int>(indices.size()) < target) add_fresh();
  while (static_cast<int>(indices.size()) > target) indices.pop_back();
}

// Visit-count policy over `indices` (-1 elsewhere); sets visits and the
// best / played move. Early moves are sometimes not the best (temperature).
void FillPolicy(Rng& rng, const std::vector<int>& indices, int ply,
                V6TrainingRecord& record) {
  std::fill(std::begin(record.probabilities), std::end(record.probabilities),
            -1.0f);
  const int visits = rng.Uniform(300, 1200);
  const double decay = 0.1 + 0.4 * rng.Unit();
  std::vector<double> weights(indices.size());
  double sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    weights[i] = std::exp(-decay * i) * (0.5 + rng.Unit());
    sum += weights[i];
  }
  std::vector<int> counts(indices.size());
  int total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    counts[i] = static_cast<int>((visits - 1) * weights[i] / sum);
    total += counts[i];
  }
  const size_t best =
      std::max_element(weights.begin(), weights.end()) - weights.begin();
  counts[best] += visits - 1 - total;
  size_t played = best;
  if (ply < 30 && rng.Chance(0.2)) {
    played = rng.Uniform(0, indices.size() - 1);
    if (counts[played] == 0) played = best;
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    record.probabilities[indices[i]] =
        static_cast<float>(static_cast<double>(counts[i]) / (visits - 1));
  }
  record.visits = visits;
  record.best_idx = static_cast<uint16_t>(indices[best]);
  record.played_idx = static_cast<uint16_t>(indices[played]);
  record.policy_kld = static_cast<float>(0.01 + 0.2 * std::pow(rng.Unit(), 2));
}

// The record bytes of `record` in the layout of `version`: V6 cut down as
// the inverse of the up-conversion.
std::string Serialize(const V6TrainingRecord& record, int version) {
  const char* bytes = reinterpret_cast<const char*>(&record);
  if (version >= 5) return std::string(bytes, RecordBytes(version));
  // V4 and V3 lack input_format (bytes 4..8) and end earlier.
  std::string out(bytes, 4);
  out.append(bytes + 8, RecordBytes(version) - 4);
  return out;
}

// Picks a move: captures are favoured so material thins out over a game.
ToyMove PickMove(Rng& rng, const ToyBoard& board,
                 const std::vector<ToyMove>& moves) {
  std::vector<ToyMove> captures;
  for (ToyMove move : moves) {
    if (board.IsCapture(move)) captures.push_back(move);
  }
  if (!captures.empty() && rng.Chance(0.35)) {
    return captures[rng.Uniform(0, captures.size() - 1)];
  }
  return moves[rng.Uniform(0, moves.size() - 1)];
}

}  // namespace

absl::Status ValidateGeneratorOptions(const GeneratorOptions& options) {
  if (options.version < 3 || options.version > 6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "record version must be 3, 4, 5 or 6, not ", options.version));
  }
  if (options.input_format != 1 && options.input_format != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input format must be 1 or 3, not ", options.input_format));
  }
  if (options.input_format == 3 && options.version < 5) {
    return absl::InvalidArgumentError(
        "input format 3 needs record version 5 or 6 (V3/V4 have no "
        "input_format field)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GenerateGame(const GeneratorOptions& options,
                                         uint64_t game_index) {
  SLUICE_RETURN_IF_ERROR(ValidateGeneratorOptions(options));
  Rng rng(Mix(options.seed) ^ Mix(game_index ^ 0x5eed5eed5eed5eedULL));
  const int positions = rng.Uniform(kMinGamePositions, kMaxGamePositions);
  const double outcome = rng.Unit();  // white's result: +1, 0, -1
  const int white_result = outcome < 0.25 ? 1 : outcome < 0.8 ? 0 : -1;
  const double final_d = white_result == 0 ? 0.9 : 0.05;

  ToyBoard board;
  std::deque<HistoryEntry> history;
  std::map<std::string, int> seen;
  std::vector<int> legal[2];  // policy indices per side
  double drift = 0;
  std::string chunk;
  chunk.reserve(positions * RecordBytes(options.version));
  for (int ply = 0; ply < positions; ++ply) {
    history.push_back({board, ++seen[board.Key()] > 1});
    if (history.size() > kHistorySteps) history.pop_front();

    V6TrainingRecord record;
    std::memset(&record, 0, sizeof(record));
    record.version = options.version;
    record.input_format = options.input_format;
    EncodePosition(history, options.input_format, record);
    std::vector<int>& moves = legal[board.black_to_move()];
    EvolveLegalMoves(rng, moves);
    FillPolicy(rng, moves, ply, record);

    // White's view drifts from balanced towards the final result.
    const double f = static_cast<double>(ply) / (positions - 1);
    drift = std::clamp(drift + 0.04 * rng.Normal(), -0.6, 0.6);
    double d = (1 - f * f) * 0.45 + f * f * final_d + 0.03 * rng.Normal();
    double q = (1 - f * f) * drift + f * f * white_result * (1 - final_d);
    ClampValue(q, d);
    const int sign = board.black_to_move() ? -1 : 1;
    double best_q = sign * q + 0.02 * rng.Normal();
    double best_d = d + 0.01 * rng.Normal();
    ClampValue(best_q, best_d);
    const int plies_left = positions - ply;
    const double root_m = plies_left * (0.85 + 0.3 * rng.Unit());
    const double best_m = std::max(0.0, root_m + 2 * rng.Normal());
    record.root_q = static_cast<float>(sign * q);
    record.root_d = static_cast<float>(d);
    record.best_q = record.played_q = static_cast<float>(best_q);
    record.best_d = record.played_d = static_cast<float>(best_d);
    record.root_m = static_cast<float>(root_m);
    record.best_m = record.played_m = static_cast<float>(best_m);
    record.plies_left = static_cast<float>(plies_left);
    record.result_q = static_cast<float>(sign * white_result);
    record.result_d = white_result == 0 ? 1.0f : 0.0f;
    if (options.version < 6) {
      record.result = static_cast<int8_t>(sign * white_result);
      if (options.version < 5) record.invariance_info = 0;  // move_count
    }
    if (rng.Chance(0.9)) {
      double orig_q = best_q + 0.05 * rng.Normal(), orig_d = best_d;
      ClampValue(orig_q, orig_d);
      record.orig_q = static_cast<float>(orig_q);
      record.orig_d = static_cast<float>(orig_d);
      record.orig_m = static_cast<float>(best_m);
    } else {
      record.orig_q = record.orig_d = record.orig_m =
          std::numeric_limits<float>::quiet_NaN();
    }
    chunk += Serialize(record, options.version);

    const std::vector<ToyMove> board_moves = board.Moves();
    if (board_moves.empty()) {
      board.PassTurn();
    } else {
      board.Play(PickMove(rng, board, board_moves));
    }
  }
  return chunk;
}

absl::StatusOr<std::string> GzipChunk(std::string_view raw) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip wrapper whose header has mtime 0.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, raw.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  stream.avail_in = raw.size();
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = out.size();
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return absl::InternalError(absl::StrCat("deflate failed: ", result));
  }
  return out;
}

absl::StatusOr<GeneratedFiles> WriteGames(const GeneratorOptions& options,
                                          const OutputOptions& output) {
  SLUICE_RETURN_IF_ERROR(ValidateGeneratorOptions(options));
  if (output.dir.empty() || output.games < 1 || output.games_per_tar < 1 ||
      output.first_game < 0) {
    return absl::InvalidArgumentError(
        "need an output directory, games >= 1, games_per_tar >= 1 and "
        "first_game >= 0");
  }
  std::error_code error;
  std::filesystem::create_directories(output.dir, error);
  if (error) {
    return absl::UnavailableError(absl::StrCat(
        "cannot create directory ", output.dir, ": ", error.message()));
  }
  GeneratedFiles files;
  std::string tar;
  const absl::CivilHour first_hour(2025, 1, 1, 0);
  const int end = output.first_game + output.games;
  for (int game = output.first_game; game < end; ++game) {
    SLUICE_ASSIGN_OR_RETURN(std::string raw, GenerateGame(options, game));
    SLUICE_ASSIGN_OR_RETURN(std::string gz, GzipChunk(raw));
    const std::string name =
        absl::StrCat("training.", kFirstGameId + game, ".gz");
    files.games++;
    files.positions += raw.size() / RecordBytes(options.version);
    files.raw_bytes += raw.size();
    files.compressed_bytes += gz.size();
    if (output.mode == OutputMode::kLoose) {
      SLUICE_RETURN_IF_ERROR(
          internal::WriteFileAtomically(output.dir, name, gz));
      files.paths.push_back(absl::StrCat(output.dir, "/", name));
      files.file_bytes += gz.size();
      continue;
    }
    const int archive = game / output.games_per_tar;
    const absl::Time hour =
        absl::FromCivil(first_hour + archive, absl::UTCTimeZone());
    SLUICE_RETURN_IF_ERROR(
        internal::AppendTarMember(name, gz, absl::ToUnixSeconds(hour), tar));
    const bool last_in_tar =
        (game + 1) % output.games_per_tar == 0 || game + 1 == end;
    if (!last_in_tar) continue;
    internal::FinishTar(tar);
    const std::string tar_name = absl::FormatTime(
        "training-run1-test80-%Y%m%d-%H%M.tar", hour, absl::UTCTimeZone());
    SLUICE_RETURN_IF_ERROR(
        internal::WriteFileAtomically(output.dir, tar_name, tar));
    files.paths.push_back(absl::StrCat(output.dir, "/", tar_name));
    files.file_bytes += tar.size();
    tar.clear();
  }
  return files;
}

}  // namespace sluice::lc0
