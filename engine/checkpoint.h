// What stages say to each other when a pipeline takes a checkpoint
// (Pipeline::Checkpoint) or resumes from one (Pipeline::Resume).
//
// A checkpoint is taken between two batches, stage by stage from the output
// upstream. Each stage is told from which point of its output the resumed
// run must produce items again (a ResumeRequest from the stage below), saves
// what it holds as references, and answers with what it needs from its own
// input: the point from which the input must flow again, and the items it
// needs read again first to rebuild its state. A stage that re-reads its
// sources itself (the chunk pool) ends the walk.
//
//   Sampler:  ResumeRequest{.from = frames handed to batches so far}
//     -> saves its reservoir as ItemRefs,
//     -> returns {.from = first chunk not wholly taken in,
//                 .restore = the ItemRefs of its reservoir}
#ifndef SLUICE_ENGINE_CHECKPOINT_H_
#define SLUICE_ENGINE_CHECKPOINT_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <vector>

namespace sluice {

// An item named by reference: item `index` of unit `unit` of a source (for
// lc0: record `index` of chunk number `unit`).
struct ItemRef {
  uint64_t unit = 0;
  uint32_t index = 0;

  auto operator<=>(const ItemRef&) const = default;
};

// An item's place in a stream whose items come in groups (the frames of a
// chunk): group `position`, `ordinal`-th item of it.
struct StreamCursor {
  uint64_t position = 0;
  uint32_t ordinal = 0;
};

// The unit in which a stage's output is resumed and acknowledged
// (Stage::resume_unit): a count of its items, or a group and the items of
// it already taken, read from each item's StreamCursor.
enum class ResumeUnit {
  kItems,    // ResumeRequest::from counts items; skip is 0
  kCursors,  // from is a group (StreamCursor::position), skip its items taken
};

// What a stage needs from its input stage's resumed run.
struct ResumeRequest {
  // The point of the input stream from which the stage needs items again;
  // its unit is agreed between the two stages (documented by both).
  uint64_t from = 0;
  // Items to read again ahead of the stream, in any order.
  std::vector<ItemRef> restore;
  // Items of group `from` already taken in, to drop again (a stage whose
  // input comes in groups; 0 otherwise).
  uint32_t skip = 0;
};

// Elastic resume: a run of M ranks resumes from the checkpoints that a run
// of N ranks took (Pipeline::Resume with N != M). Every stage of the chain
// merges the N states it saved into its new rank's, from the output
// upstream as a checkpoint walks it (Stage::PlanElasticResume): a stage
// that holds items names the ones it needs read again by old rank and
// reference, and the stage that ends the walk says what those references
// become in the resumed run (ElasticResume::translate). Then every stage
// restores its merged state (Stage::FinishElasticResume). Each new rank
// computes its share alone, from the same checkpoints: a pure function of
// the checkpoints, the config, the rank and M.

// An item named by reference in the checkpoint of old rank `rank`.
struct OldItemRef {
  uint32_t rank = 0;
  ItemRef ref;
};

// What a stage needs from its input stage's merged state.
struct ElasticRequest {
  // Items to read again ahead of the stream, in any order.
  std::vector<OldItemRef> restore;
  // By old rank: the items of the group where that rank's input resumes
  // that its stage had already taken in (ResumeRequest::skip).
  std::vector<uint32_t> skip;
};

// The resume that every stage of the chain shares.
struct ElasticResume {
  uint32_t rank = 0;        // this rank
  uint32_t world_size = 1;  // M
  // N: the checkpoints, one per old rank, in rank order.
  uint32_t old_world_size = 1;
  // Set by the stage that ends the walk: the unit `unit` of old rank
  // `old_rank` names in the resumed run (engine/checkpoint.h ItemRef).
  std::function<uint64_t(uint32_t old_rank, uint64_t unit)> translate;
};

// What an item arriving at a resuming stage is (a stage whose state names
// items that its input reads again first; stages/generic/reservoir_stage.h
// asks the item type through RestoreRoleOf(item)).
enum class RestoreRole {
  kRestored,      // read again for the stage's state
  kEndOfRestore,  // an empty marker after the last restored item
  kStream,        // the first item of the resumed stream
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_CHECKPOINT_H_
