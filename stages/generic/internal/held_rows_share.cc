#include "stages/generic/internal/held_rows_share.h"

namespace sluice {

std::vector<OldItemRef> ShareOfHeldRows(
    const std::vector<BatcherCheckpoint>& old, uint32_t rank,
    uint32_t world_size) {
  std::vector<OldItemRef> share;
  uint64_t turn = 0;  // the row's place in the concatenation
  for (uint32_t k = 0; k < old.size(); ++k) {
    const ItemRefs& held = old[k].held();
    for (int i = 0; i < held.unit_size() && i < held.index_size(); ++i) {
      if (turn++ % world_size != rank) continue;
      share.push_back(
          {.rank = k, .ref = {.unit = held.unit(i), .index = held.index(i)}});
    }
  }
  return share;
}

}  // namespace sluice
