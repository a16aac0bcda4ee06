// Deterministic position sampling. Every decision is a pure function of
// (seed, chunk hash, position index): a counter-based generator, so results
// never depend on thread scheduling or on the order chunks are processed.
// Decisions that must be independent of each other need different seeds.
//
//   bool keep = KeepWithProbability(1.0 / 32, seed, chunk_hash, index);
//   std::vector<uint32_t> picked = ChoosePositions(seed, chunk_hash, n, 8);
//   SLUICE_ASSIGN_OR_RETURN(DiffFocus focus, DiffFocus::Create(params));
//   if (focus.Keep(record, seed, chunk_hash, index)) ...
#ifndef SLUICE_STAGES_LC0_FORMAT_POSITION_SAMPLING_H_
#define SLUICE_STAGES_LC0_FORMAT_POSITION_SAMPLING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {

// The splitmix64 finalizer: a bijection on uint64 with good avalanche.
uint64_t SplitMix64(uint64_t x);

// A uniform double in [0, 1) determined by (seed, chunk_hash, index). Chunk
// hashes and indices are mixed in separately, so nearby hashes or indices
// give unrelated values.
double UniformDouble(uint64_t seed, uint64_t chunk_hash, uint64_t index);

// Keeps position `index` of the chunk with probability `p` (1/N for the
// chunkparser `sample` knob): p <= 0 never keeps, p >= 1 always keeps.
bool KeepWithProbability(double p, uint64_t seed, uint64_t chunk_hash,
                         uint64_t index);

// Chooses min(count, positions) distinct indices of a chunk of `positions`
// positions, each subset of that size equally likely, returned ascending.
// The same (seed, chunk_hash, positions, count) always gives the same result.
std::vector<uint32_t> ChoosePositions(uint64_t seed, uint64_t chunk_hash,
                                      uint32_t positions, uint32_t count);

// The diff-focus knobs of lczero-training's chunkparser.
struct DiffFocusParams {
  double min = 1.0;    // diff_focus_min, in [0, 1]
  double slope = 0.0;  // diff_focus_slope, >= 0
  double q_weight = 6.0;
  double pol_scale = 3.5;
};

// Keeps positions with probability min(1, min + slope * total), where
// total = (q_weight * |best_q - orig_q| + policy_kld) / (q_weight +
// pol_scale); always keeps when orig_q is NaN, policy_kld is 0 or the record
// is older than V6 (those lack orig_q and policy_kld).
class DiffFocus {
 public:
  // InvalidArgument unless min is in [0, 1], slope, q_weight and pol_scale
  // are >= 0 and q_weight + pol_scale > 0.
  static absl::StatusOr<DiffFocus> Create(const DiffFocusParams& params);

  // The keep probability of `record`, in [0, 1].
  double KeepProbability(const V6TrainingRecord& record) const;

  // The keep decision for position `index` of the chunk `chunk_hash`.
  bool Keep(const V6TrainingRecord& record, uint64_t seed, uint64_t chunk_hash,
            uint64_t index) const;

 private:
  explicit DiffFocus(const DiffFocusParams& params) : params_(params) {}

  DiffFocusParams params_;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_POSITION_SAMPLING_H_
