// The batcher's part of an elastic resume (engine/checkpoint.h): the rows
// that the batchers of N old ranks held (block_order VIEWS_FIRST: taken in,
// not yet emitted; BatcherCheckpoint.held), shared among M new ranks.
//
//   std::vector<OldItemRef> mine = ShareOfHeldRows(old_states, rank, M);
//
// A pure function of the old states, the rank and M, so each new rank
// computes its share alone.
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_HELD_ROWS_SHARE_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_HELD_ROWS_SHARE_H_

#include <cstdint>
#include <vector>

#include "engine/checkpoint.h"
#include "proto/loader_checkpoint.pb.h"

namespace sluice {

// New rank `rank` of `world_size`'s share of the rows the old ranks held
// (`old`, by old rank): of their concatenation, old rank by old rank and
// each in its slot order, the j-th row goes to new rank j mod world_size.
// The shares are disjoint, together hold every row, and keep the rows'
// order.
std::vector<OldItemRef> ShareOfHeldRows(
    const std::vector<BatcherCheckpoint>& old, uint32_t rank,
    uint32_t world_size);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_HELD_ROWS_SHARE_H_
