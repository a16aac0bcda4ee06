// ShareOfHeldRows: the old ranks' held rows go round the new ranks in
// old-rank order, each new rank's in that order: disjoint shares that
// together hold every row, a function of the states, the rank and M.
#include "stages/generic/internal/held_rows_share.h"

#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

BatcherCheckpoint Held(const std::vector<ItemRef>& refs) {
  BatcherCheckpoint state;
  for (const ItemRef& ref : refs) {
    state.mutable_held()->add_unit(ref.unit);
    state.mutable_held()->add_index(ref.index);
  }
  return state;
}

std::vector<std::pair<uint32_t, ItemRef>> Pairs(
    const std::vector<OldItemRef>& refs) {
  std::vector<std::pair<uint32_t, ItemRef>> pairs;
  for (const OldItemRef& ref : refs) pairs.emplace_back(ref.rank, ref.ref);
  return pairs;
}

TEST(HeldRowsShareTest, RowsGoRoundTheNewRanksInOldRankOrder) {
  // Old rank 0 held three rows (out of file order), rank 1 none, rank 2 two.
  const std::vector<BatcherCheckpoint> old = {
      Held({{.unit = 2, .index = 5},
            {.unit = 0, .index = 9},
            {.unit = 2, .index = 1}}),
      Held({}), Held({{.unit = 1, .index = 3}, {.unit = 1, .index = 4}})};
  using Expected = std::vector<std::pair<uint32_t, ItemRef>>;
  EXPECT_EQ(Pairs(ShareOfHeldRows(old, 0, 2)),
            (Expected{{0, {.unit = 2, .index = 5}},
                      {0, {.unit = 2, .index = 1}},
                      {2, {.unit = 1, .index = 4}}}));
  EXPECT_EQ(
      Pairs(ShareOfHeldRows(old, 1, 2)),
      (Expected{{0, {.unit = 0, .index = 9}}, {2, {.unit = 1, .index = 3}}}));
  // One new rank takes every row, in order.
  EXPECT_EQ(ShareOfHeldRows(old, 0, 1).size(), 5u);
  // More new ranks than rows: the last ones take none.
  EXPECT_EQ(ShareOfHeldRows(old, 5, 7).size(), 0u);
  EXPECT_EQ(ShareOfHeldRows(old, 4, 7).size(), 1u);
}

TEST(HeldRowsShareTest, NothingHeldSharesNothing) {
  EXPECT_TRUE(ShareOfHeldRows({Held({}), Held({})}, 0, 3).empty());
  EXPECT_TRUE(ShareOfHeldRows({}, 0, 1).empty());
}

}  // namespace
}  // namespace sluice
