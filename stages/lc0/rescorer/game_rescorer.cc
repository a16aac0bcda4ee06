#include "stages/lc0/rescorer/game_rescorer.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <span>

#include "absl/strings/str_cat.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/rescorer/deblunder.h"
#include "stages/lc0/rescorer/game_replay.h"
#include "stages/lc0/rescorer/input_format_conversion.h"
#include "stages/lc0/rescorer/policy_adjustment.h"
#include "stages/lc0/rescorer/record_checks.h"
#include "stages/lc0/rescorer/result_rescoring.h"
#include "stages/lc0/rescorer/v7_conversion.h"

namespace sluice::lc0::rescorer {
namespace {

Rejection Refuse(std::string_view reason, std::string detail) {
  return Rejection{.reason = reason, .detail = std::move(detail)};
}

// A V3/V4/V5 record in the V6 layout as lc0's reader upgrades it: the
// result from the int8, played_* 0, orig_* NaN, no visits.
void UpgradeAsLc0(V6TrainingRecord& record) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  record.version = 6;
  record.result_q = static_cast<float>(record.result);
  record.result_d = record.result == 0 ? 1.0f : 0.0f;
  record.played_q = record.played_d = record.played_m = 0;
  record.orig_q = record.orig_d = record.orig_m = nan;
  record.visits = 0;
  record.played_idx = record.best_idx = 0;
  record.policy_kld = 0;
  record.reserved = 0;
}

// This thread's scratch space for the `n` records of one game, contents
// unset. A game's records are rescored in place; a fresh megabyte per game
// would cost more in page faults and zeroing than the rescoring. Rescore
// never waits, so one buffer per thread serves one game at a time.
std::span<V6TrainingRecord> ScratchRecords(size_t n) {
  thread_local std::unique_ptr<V6TrainingRecord[]> records;
  thread_local size_t capacity = 0;
  if (capacity < n) {
    records.reset(new V6TrainingRecord[n]);  // default-initialised: not zeroed
    capacity = n;
  }
  return {records.get(), n};
}

}  // namespace

RescoreCounts& RescoreCounts::operator+=(const RescoreCounts& other) {
  games += other.games;
  positions += other.positions;
  positions_probed += other.positions_probed;
  results_changed += other.results_changed;
  dtz_decisions += other.dtz_decisions;
  blunders += other.blunders;
  boosted_entries += other.boosted_entries;
  records_dropped += other.records_dropped;
  return *this;
}

GameRescorer::GameRescorer(
    std::shared_ptr<const chess::SyzygyTablebase> tablebase,
    const RescoreOptions& options)
    : tablebase_(std::move(tablebase)), options_(options) {}

std::optional<Rejection> GameRescorer::Rescore(std::string_view records,
                                               std::string* out,
                                               RescoreCounts* counts) const {
  return RescoreInto(records, out, counts);
}

std::optional<Rejection> GameRescorer::Rescore(std::string_view records,
                                               io::RecycledBytes* out,
                                               RescoreCounts* counts) const {
  return RescoreInto(records, out, counts);
}

template <typename Bytes>
std::optional<Rejection> GameRescorer::RescoreInto(
    std::string_view records, Bytes* out, RescoreCounts* counts) const {
  RescoredGame game;
  if (std::optional<Rejection> rejection =
          RescoreGame(records, /*in_place=*/false, &game, counts)) {
    return rejection;
  }
  const size_t offset = out->size();
  out->resize(offset + game.output_bytes);
  WriteOutput(game, out->data() + offset);
  return std::nullopt;
}

std::optional<Rejection> GameRescorer::RescoreInPlace(
    io::RecycledBytes* records, RescoreCounts* counts) const {
  uint32_t version = 0;
  if (records->size() >= sizeof(version)) {
    std::memcpy(&version, records->data(), sizeof(version));
  }
  if (version != 6 || options_.output_version != 6) {
    io::RecycledBytes out;
    std::optional<Rejection> rejection = Rescore(*records, &out, counts);
    if (!rejection) *records = std::move(out);
    return rejection;
  }
  RescoredGame game;
  if (std::optional<Rejection> rejection =
          RescoreGame(*records, /*in_place=*/true, &game, counts)) {
    return rejection;
  }
  // The records kept move down over those dropped.
  WriteOutput(game, records->data());
  records->resize(game.output_bytes);
  return std::nullopt;
}

std::optional<Rejection> GameRescorer::RescoreGame(
    std::string_view records, bool in_place, RescoredGame* rescored,
    RescoreCounts* counts) const {
  if (records.empty()) return Refuse("empty_file", "no records");
  if (records.size() < 4) {
    return Refuse("size_not_multiple", "shorter than a version number");
  }
  uint32_t version;
  std::memcpy(&version, records.data(), sizeof(version));
  size_t record_size;
  switch (version) {
    case 3:
    case 4:
    case 5:
    case 6:
      record_size = RecordSize(static_cast<RecordVersion>(version));
      break;
    case 7:
      record_size = kV7RecordSize;
      break;
    default:
      return Refuse("unknown_version", absl::StrCat("version ", version));
  }
  if (records.size() % record_size != 0) {
    return Refuse("size_not_multiple",
                  absl::StrCat(records.size(), " bytes of V", version,
                               " records of ", record_size));
  }
  const size_t n = records.size() / record_size;
  // Records are packed structs: V6 records are rescored where they lie.
  const std::span<V6TrainingRecord> game =
      in_place ? std::span(reinterpret_cast<V6TrainingRecord*>(
                               const_cast<char*>(records.data())),
                           n)
               : ScratchRecords(n);
  std::vector<V7Tail> tails;
  // Each record is checked as it is read, while its bytes are in cache; a
  // version mismatch anywhere still comes first, as lc0 reads the whole
  // file before it checks a record.
  std::optional<Rejection> first_bad_record;
  for (size_t i = 0; i < n; ++i) {
    const std::string_view bytes = records.substr(i * record_size, record_size);
    uint32_t record_version;
    std::memcpy(&record_version, bytes.data(), sizeof(record_version));
    if (record_version != version) {
      return Refuse("version_mismatch",
                    absl::StrCat("record ", i, " has version ", record_version,
                                 ", record 0 ", version));
    }
    if (version <= 5) {
      std::memset(&game[i], 0, sizeof(V6TrainingRecord));
      UpconvertToV6(bytes, static_cast<RecordVersion>(version), &game[i]);
      UpgradeAsLc0(game[i]);
    } else {
      if (!in_place) std::memcpy(&game[i], bytes.data(), kV6RecordSize);
      if (version == 7) {
        V7Tail& tail = tails.emplace_back();
        std::memcpy(&tail, bytes.data() + kV7TailOffset, sizeof(tail));
      }
    }
    if (!first_bad_record) {
      first_bad_record = CheckRecord(game[i], static_cast<int>(i));
    }
  }
  if (first_bad_record) return first_bad_record;
  return RescoreRecords(game, version == 7 ? &tails : nullptr, rescored,
                        counts);
}

std::optional<Rejection> GameRescorer::RescoreRecords(
    std::span<V6TrainingRecord> game, const std::vector<V7Tail>* v7_tails,
    RescoredGame* rescored, RescoreCounts* counts) const {
  const int n = static_cast<int>(game.size());
  if (n == 0) return Refuse("empty_file", "no records");
  for (int i = 0; i < n; ++i) {
    if (game[i].input_format != 1 && game[i].input_format != 3) {
      return Refuse(
          "input_format_not_rescored",
          absl::StrCat("record ", i, ": input_format ", game[i].input_format));
    }
  }
  int first_result;
  if (std::optional<Rejection> rejection =
          ReadResult(game[0], 0, &first_result)) {
    return rejection;
  }
  GameReplay replay;
  if (std::optional<Rejection> rejection = ReplayGame(game, &replay)) {
    return rejection;
  }
  std::vector<std::pair<float, float>> original_results(n);
  for (int i = 0; i < n; ++i) {
    original_results[i] = {game[i].result_q, game[i].result_d};
  }
  RescoreCounts local;
  const chess::SyzygyTablebase& tablebase = *tablebase_;
  GameProbes probes(replay, tablebase);
  if (std::optional<Rejection> rejection =
          RescoreResults(probes, game, &local)) {
    return rejection;
  }
  if (AdjustsPolicy(options_)) {
    AdjustPolicies(replay, tablebase, options_, game, &local);
  }
  FillMissingPliesLeft(game);
  CorrectPliesLeftByDtz(probes, game);
  if (options_.deblunder) Deblunder(probes, options_, game, &local);
  if (options_.new_input_format >= 0) {
    ConvertInputFormat(replay, options_.new_input_format, game);
  }
  local.games = 1;
  local.positions = n;
  for (int i = 0; i < n; ++i) {
    if (std::pair{game[i].result_q, game[i].result_d} != original_results[i]) {
      ++local.results_changed;
    }
  }
  rescored->records = game;
  if (options_.output_version == 7) {
    rescored->tails = v7_tails != nullptr
                          ? *v7_tails
                          : ComputeV7Tails(game, options_.st_q_theta);
    rescored->output_bytes = n * kV7RecordSize;
  } else {
    for (int i = 0; i < n; ++i) {
      if (game[i].invariance_info & 0x40) {
        ++local.records_dropped;
      } else {
        rescored->output_bytes += kV6RecordSize;
      }
    }
  }
  *counts += local;
  return std::nullopt;
}

void GameRescorer::WriteOutput(const RescoredGame& game,
                               char* destination) const {
  if (options_.output_version == 7) {
    for (size_t i = 0; i < game.records.size(); ++i) {
      V6TrainingRecord& record = game.records[i];
      record.version = 7;
      std::memcpy(destination, &record, kV7TailOffset);
      std::memcpy(destination + kV7TailOffset, &game.tails[i], sizeof(V7Tail));
      destination += kV7RecordSize;
    }
    return;
  }
  for (V6TrainingRecord& record : game.records) {
    if (record.invariance_info & 0x40) continue;
    if (record.version == 7) {
      record.version = 6;
      record.reserved = 0;
    }
    // In place, a record moves down over dropped ones or stays.
    if (destination != reinterpret_cast<char*>(&record)) {
      std::memmove(destination, &record, kV6RecordSize);
    }
    destination += kV6RecordSize;
  }
}

}  // namespace sluice::lc0::rescorer
