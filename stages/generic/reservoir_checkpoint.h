// The checkpoint of a reservoir (ReservoirShuffler, through ReservoirStage):
// its state as the ReservoirCheckpoint message that shuffling_frame_sampler
// and shuffle_buffer both save, and what it asks of its input on resume.
//
//   ReservoirCheckpoint saved = ToCheckpoint(*shuffler.Save(from));
//   ResumeRequest upstream = RequestFor(saved, state.from);
//   std::vector<ItemRef> reservoir = RefsOf(saved.reservoir());
#ifndef SLUICE_STAGES_GENERIC_RESERVOIR_CHECKPOINT_H_
#define SLUICE_STAGES_GENERIC_RESERVOIR_CHECKPOINT_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engine/checkpoint.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/generic/reservoir_shuffler.h"

namespace sluice {

// The references of `refs`, in order (a list longer than the other is cut).
std::vector<ItemRef> RefsOf(const ItemRefs& refs);

// Appends `refs` to `out`.
void AppendRefs(const std::vector<ItemRef>& refs, ItemRefs* out);

// The message of a shuffler's saved state.
ReservoirCheckpoint ToCheckpoint(const ReservoirState& state);

// What a reservoir restored from `saved` needs from its input: the stream
// from `from` (less `saved.skip()` items of it), and first the items of its
// pending list and of its reservoir read again.
ResumeRequest RequestFor(const ReservoirCheckpoint& saved, uint64_t from);

// OK when `saved` fits a reservoir of `size` items: parallel lists of equal
// length and no more residents than `size`; otherwise an error naming
// `items` ("frames", "examples").
absl::Status CheckFits(const ReservoirCheckpoint& saved, uint64_t size,
                       std::string_view items);

// Elastic resume (engine/checkpoint.h): a new rank's share of the
// reservoirs of the old ranks, items named by old rank until the stage
// that ends the walk says what their references become.
struct ReservoirShare {
  std::vector<OldItemRef> pending;    // emitted first, in order
  std::vector<OldItemRef> reservoir;  // slot by slot
  uint64_t random_state = 0;
  uint64_t past_min_fill = 0;
  std::vector<uint32_t> skip;  // by old rank (ReservoirCheckpoint::skip)
};

// The share of new rank `rank` of `world_size` in the old ranks' states
// `old` (by old rank). Their items go round the new ranks, the pending
// ones first, in old-rank order (the t-th to rank t mod world_size): the
// shares are disjoint, together hold every item, and each is within one
// item of its part. Pending items stay pending (in their order); of its
// part of the reservoirs, a rank keeps `size` residents and emits the rest
// first, after its pending items. Its generator mixes the old ones with
// `rank` and `world_size`; its growth schedule is the furthest old one.
ReservoirShare ShareOfReservoirs(const std::vector<ReservoirCheckpoint>& old,
                                 uint32_t rank, uint32_t world_size,
                                 uint64_t size);

// What a share needs from its input: its items read again, and by old rank
// the items of the group where that rank's input resumes already taken in.
ElasticRequest RequestFor(const ReservoirShare& share);

// The state a reservoir restores from: `share` with its references as the
// resumed run names them.
ReservoirCheckpoint ToCheckpoint(
    const ReservoirShare& share,
    const std::function<uint64_t(uint32_t, uint64_t)>& translate);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_RESERVOIR_CHECKPOINT_H_
