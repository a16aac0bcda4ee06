// arrow_source's part of an elastic resume (engine/checkpoint.h): the
// states that the sources of N old ranks saved, merged into the state new
// rank `rank` of `world_size` resumes from. A pure function of those
// states, the stage below's request, the pass orders (mode and seed), the
// rank and the world size, so every new rank computes its share alone.
//
//   absl::StatusOr<ArrowSourceCheckpoint> merged = MergeArrowSourceStates(
//       old_states, request, {.train = true, .seed = 3}, rank, world_size);
//   state.Restore(merged->SerializeAsString());
//
// What a new rank takes:
// - The data set: the old ranks' (every old rank that had surveyed it must
//   name the same files, rows and sizes), numbered as they numbered it, so
//   the references of every old rank keep their meaning (translate is the
//   identity).
// - The rest of the interrupted passes: an old rank's interrupted pass is
//   the one its stream resumes in; the rows of its shard (engine/
//   rank_shard.h RowsOfRank with the old world size) from that point to
//   the pass's end, and the runs it had itself been given by an elastic
//   resume and not yet read, are each cut into `world_size` contiguous
//   runs (RowsOfRank again, by the new world size), one per new rank:
//   disjoint, together every row, each within one row of its part. The
//   runs of an earlier elastic resume come first; then, interrupted pass
//   by pass, in the pass's file order, old rank by old rank within a file.
//   Old ranks interrupted in different passes each have their own pass
//   finished; the passes between theirs and the furthest are not read for
//   their shards.
// - The stream: then on from the pass after the furthest interrupted one
//   (TRAIN), the new rank's own shard; nothing more in EVAL.
// - Restores: the rows the stage below asked for (its share of the old
//   reservoirs, or of a VIEWS_FIRST batcher's held rows), under the old
//   ranks' references.
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_SOURCE_MERGE_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_SOURCE_MERGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/checkpoint.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/generic/internal/arrow_dataset.h"

namespace sluice {

// How the source orders the files of a pass (stages/generic/
// internal/arrow_dataset.h FilesOfPass): shuffled by seed + pass in TRAIN.
struct ArrowPassOrder {
  bool train = false;
  uint64_t seed = 0;
};

// The data set `saved` names (paths, rows and numbers only), for the pass
// orders (FilesOfPass).
ArrowDataset SavedDataSet(const ArrowSourceCheckpoint& saved);

// The merged state of new rank `rank` of `world_size` from the old ranks'
// `states` (by old rank). Errors: a state does not parse, or two old ranks
// surveyed different data sets (the error names the ranks and the first
// file that differs).
absl::StatusOr<ArrowSourceCheckpoint> MergeArrowSourceStates(
    const std::vector<std::string>& states, const ElasticRequest& downstream,
    const ArrowPassOrder& order, uint32_t rank, uint32_t world_size);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_SOURCE_MERGE_H_
