#include "stages/lc0/rescorer/result_rescoring.h"

#include <cstdlib>
#include <vector>

#include "stages/lc0/rescorer/record_checks.h"

namespace sluice::lc0::rescorer {
namespace {

using chess::Wdl;

// Writes score s: result_q = s, result_d = 1 for a draw, else 0.
void WriteResult(V6TrainingRecord& record, int score) {
  record.result_q = static_cast<float>(score);
  record.result_d = score == 0 ? 1.0f : 0.0f;
}

}  // namespace

int WdlScore(Wdl wdl) {
  return wdl == Wdl::kWin ? 1 : wdl == Wdl::kLoss ? -1 : 0;
}

std::optional<Rejection> RescoreResults(GameProbes& probes,
                                        std::span<V6TrainingRecord> records,
                                        RescoreCounts* counts) {
  const GameReplay& replay = probes.replay();
  const int n = static_cast<int>(records.size());
  // The WDL score of each record's position, probed once (record 0 never).
  std::vector<std::optional<int>> scores(n);
  for (int k = 1; k < n; ++k) {
    if (const std::optional<Wdl> wdl = probes.Wdl(k)) {
      scores[k] = WdlScore(*wdl);
      ++counts->positions_probed;
    }
  }
  // Pass 1: positions reached by a zeroing move.
  int segment_start = 0;
  for (int k = 1; k < n; ++k) {
    if (!scores[k] || replay.positions[k].rule50() != 0) continue;
    for (int j = k; j >= segment_start; --j) {
      int old_result;
      if (std::optional<Rejection> rejection =
              ReadResult(records[j], j, &old_result)) {
        return rejection;
      }
      WriteResult(records[j], (k - j) % 2 == 0 ? *scores[k] : -*scores[k]);
    }
    segment_start = k + 1;
  }
  // Pass 2: the other tablebase positions.
  for (int k = 1; k < n; ++k) {
    const int rule50 = replay.positions[k].rule50();
    if (!scores[k] || rule50 == 0) continue;
    const int score = *scores[k];
    int old_result;
    if (std::optional<Rejection> rejection =
            ReadResult(records[k], k, &old_result)) {
      return rejection;
    }
    int result = old_result == score ? old_result : 0;
    bool proven = false;
    if (old_result != score && score != 0 &&
        replay.NoRepetitionWithinRule50(k)) {
      const std::optional<int> dtz = probes.Dtz(k);
      if (dtz && rule50 + std::abs(*dtz) < 99) {
        result = score;
        proven = true;
        ++counts->dtz_decisions;
      }
    }
    if (!proven && old_result != 0 && score != 0) {
      const std::optional<int> dtz = probes.Dtz(k);
      if (dtz && rule50 + std::abs(*dtz) > 101) {
        result = 0;
        ++counts->dtz_decisions;
      }
    }
    WriteResult(records[k], result);
  }
  return std::nullopt;
}

void FillMissingPliesLeft(std::span<V6TrainingRecord> records) {
  const int n = static_cast<int>(records.size());
  for (int k = 0; k < n; ++k) {
    if (records[k].plies_left == 0) {
      records[k].plies_left = static_cast<float>(n - k);
    }
  }
}

void CorrectPliesLeftByDtz(GameProbes& probes,
                           std::span<V6TrainingRecord> records) {
  bool all_draws = true;
  for (const V6TrainingRecord& record : records) {
    if (record.result_q != 0) {
      all_draws = false;
      break;
    }
  }
  if (all_draws) return;
  const int n = static_cast<int>(records.size());
  for (int k = 1; k < n; ++k) {
    const chess::Position& position = probes.replay().positions[k];
    if (position.has_castling_rights() || position.piece_count() > 3 ||
        position.pieces(chess::kPawn) != 0) {
      continue;
    }
    const std::optional<Wdl> wdl = probes.Wdl(k);
    if (!wdl || (*wdl != Wdl::kWin && *wdl != Wdl::kLoss)) continue;
    if (!probes.replay().NoRepetitionWithinRule50(k)) continue;
    const std::optional<int> dtz = probes.Dtz(k);
    if (!dtz) continue;
    const int distance = std::abs(*dtz);
    if (position.rule50() + distance >= 99) continue;
    records[k].plies_left = static_cast<float>(distance);
    if (position.rule50() != 0) continue;
    for (int j = k - 1; j >= 0; --j) {
      records[j].plies_left = static_cast<float>(distance + (k - j));
    }
  }
}

}  // namespace sluice::lc0::rescorer
