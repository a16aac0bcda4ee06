// The reservoir's checkpoint message and its elastic-resume share: the
// references round-trip; the shares of the new ranks are disjoint, hold
// every old item (pending ones pending, in order), are each within one
// item of their part, keep at most `size` residents, and are a pure
// function of the states, the rank and the world size; random rank counts
// and fills keep all of it.
#include "stages/generic/reservoir_checkpoint.h"

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

ReservoirCheckpoint State(uint32_t old_rank, size_t pending, size_t residents,
                          uint32_t skip) {
  ReservoirCheckpoint state;
  for (size_t i = 0; i < pending; ++i) {
    state.mutable_pending()->add_unit(old_rank);
    state.mutable_pending()->add_index(static_cast<uint32_t>(i));
  }
  for (size_t i = 0; i < residents; ++i) {
    state.mutable_reservoir()->add_unit(100 + old_rank);
    state.mutable_reservoir()->add_index(static_cast<uint32_t>(i));
  }
  state.set_random_state(old_rank * 7 + 1);
  state.set_past_min_fill(old_rank);
  state.set_skip(skip);
  return state;
}

auto Key(const OldItemRef& item) {
  return std::tuple(item.rank, item.ref.unit, item.ref.index);
}

TEST(ReservoirCheckpointTest, RefsRoundTrip) {
  const std::vector<ItemRef> refs = {{5, 1}, {3, 9}, {5, 0}};
  ItemRefs message;
  AppendRefs(refs, &message);
  EXPECT_EQ(RefsOf(message), refs);
}

TEST(ReservoirCheckpointTest, SharesAreDisjointCompleteAndBalanced) {
  std::mt19937 random(3);
  for (int trial = 0; trial < 50; ++trial) {
    const auto old_ranks = static_cast<uint32_t>(1 + random() % 5);
    const auto new_ranks = static_cast<uint32_t>(1 + random() % 5);
    const uint64_t size = 1 + random() % 40;
    std::vector<ReservoirCheckpoint> old;
    std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> pending, residents;
    for (uint32_t k = 0; k < old_ranks; ++k) {
      old.push_back(
          State(k, random() % 10, random() % (size + 1), random() % 3));
      for (const ItemRef& ref : RefsOf(old.back().pending())) {
        pending.emplace_back(k, ref.unit, ref.index);
      }
      for (const ItemRef& ref : RefsOf(old.back().reservoir())) {
        residents.emplace_back(k, ref.unit, ref.index);
      }
    }
    std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> dealt;
    const size_t items = pending.size() + residents.size();
    for (uint32_t rank = 0; rank < new_ranks; ++rank) {
      const ReservoirShare share =
          ShareOfReservoirs(old, rank, new_ranks, size);
      EXPECT_LE(share.reservoir.size(), size);
      const size_t part = share.pending.size() + share.reservoir.size();
      EXPECT_GE(part, items / new_ranks);
      EXPECT_LE(part, (items + new_ranks - 1) / new_ranks);
      // Old pending items stay pending, in their order, ahead of residents
      // that did not fit.
      std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> mine;
      for (const OldItemRef& item : share.pending) mine.push_back(Key(item));
      std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> mine_pending;
      std::copy_if(mine.begin(), mine.end(), std::back_inserter(mine_pending),
                   [](const auto& key) { return std::get<1>(key) < 100; });
      EXPECT_TRUE(std::is_sorted(mine_pending.begin(), mine_pending.end()));
      EXPECT_TRUE(
          std::equal(mine_pending.begin(), mine_pending.end(), mine.begin()));
      for (const OldItemRef& item : share.reservoir) mine.push_back(Key(item));
      dealt.insert(dealt.end(), mine.begin(), mine.end());
      EXPECT_EQ(share.skip.size(), old_ranks);
      // A pure function of its arguments.
      const ReservoirShare again =
          ShareOfReservoirs(old, rank, new_ranks, size);
      EXPECT_EQ(again.random_state, share.random_state);
      EXPECT_EQ(again.pending.size(), share.pending.size());
    }
    std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> every = pending;
    every.insert(every.end(), residents.begin(), residents.end());
    std::sort(every.begin(), every.end());
    std::sort(dealt.begin(), dealt.end());
    EXPECT_EQ(dealt, every) << old_ranks << " -> " << new_ranks;
  }
}

TEST(ReservoirCheckpointTest, AShareTranslatesItsReferences) {
  const ReservoirShare share =
      ShareOfReservoirs({State(0, 2, 3, 1), State(1, 0, 2, 0)}, 0, 1, 10);
  const ReservoirCheckpoint saved = ToCheckpoint(
      share,
      [](uint32_t old_rank, uint64_t unit) { return unit + 1000 * old_rank; });
  ASSERT_EQ(saved.pending().unit_size(), 2);
  ASSERT_EQ(saved.reservoir().unit_size(), 5);
  EXPECT_EQ(saved.reservoir().unit(3), 1101u);  // old rank 1, unit 101
  EXPECT_EQ(saved.skip(), 0u);  // skips go to the input's replays
  EXPECT_EQ(RequestFor(share).restore.size(), 7u);
  EXPECT_EQ(RequestFor(share).skip, (std::vector<uint32_t>{1, 0}));
}

}  // namespace
}  // namespace sluice
