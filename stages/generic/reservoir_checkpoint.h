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

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_RESERVOIR_CHECKPOINT_H_
