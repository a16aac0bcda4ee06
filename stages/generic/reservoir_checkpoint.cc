#include "stages/generic/reservoir_checkpoint.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/stable_hash.h"

namespace sluice {

std::vector<ItemRef> RefsOf(const ItemRefs& refs) {
  std::vector<ItemRef> out;
  const int count = std::min(refs.unit_size(), refs.index_size());
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    out.push_back({.unit = refs.unit(i), .index = refs.index(i)});
  }
  return out;
}

void AppendRefs(const std::vector<ItemRef>& refs, ItemRefs* out) {
  out->mutable_unit()->Reserve(out->unit_size() +
                               static_cast<int>(refs.size()));
  out->mutable_index()->Reserve(out->index_size() +
                                static_cast<int>(refs.size()));
  for (const ItemRef& ref : refs) {
    out->add_unit(ref.unit);
    out->add_index(ref.index);
  }
}

ReservoirCheckpoint ToCheckpoint(const ReservoirState& state) {
  ReservoirCheckpoint saved;
  AppendRefs(state.pending, saved.mutable_pending());
  AppendRefs(state.reservoir, saved.mutable_reservoir());
  saved.set_random_state(state.random_state);
  saved.set_past_min_fill(state.past_min_fill);
  saved.set_skip(state.skip);
  return saved;
}

ResumeRequest RequestFor(const ReservoirCheckpoint& saved, uint64_t from) {
  ResumeRequest request{.from = from,
                        .skip = static_cast<uint32_t>(saved.skip())};
  request.restore = RefsOf(saved.pending());
  const std::vector<ItemRef> reservoir = RefsOf(saved.reservoir());
  request.restore.insert(request.restore.end(), reservoir.begin(),
                         reservoir.end());
  return request;
}

absl::Status CheckFits(const ReservoirCheckpoint& saved, uint64_t size,
                       std::string_view items) {
  if (saved.pending().unit_size() != saved.pending().index_size() ||
      saved.reservoir().unit_size() != saved.reservoir().index_size()) {
    return absl::InvalidArgumentError(
        "the reservoir's state does not parse (lists of unequal length)");
  }
  if (static_cast<uint64_t>(saved.reservoir().unit_size()) > size) {
    return absl::InvalidArgumentError(
        absl::StrCat("the reservoir holds ", saved.reservoir().unit_size(), " ",
                     std::string(items), ", more than its size ", size));
  }
  return absl::OkStatus();
}

ReservoirShare ShareOfReservoirs(const std::vector<ReservoirCheckpoint>& old,
                                 uint32_t rank, uint32_t world_size,
                                 uint64_t size) {
  ReservoirShare share;
  uint64_t random_state = HashCombine(rank, world_size);
  uint64_t turn = 0;  // the item's place in the round
  const auto deal = [&](uint32_t old_rank, const ItemRefs& refs,
                        std::vector<OldItemRef>& out) {
    for (const ItemRef& ref : RefsOf(refs)) {
      if (turn++ % world_size == rank) out.push_back({old_rank, ref});
    }
  };
  for (uint32_t k = 0; k < old.size(); ++k) {
    deal(k, old[k].pending(), share.pending);
  }
  std::vector<OldItemRef> residents;
  for (uint32_t k = 0; k < old.size(); ++k) {
    deal(k, old[k].reservoir(), residents);
    random_state = HashCombine(random_state, old[k].random_state());
    share.past_min_fill = std::max(share.past_min_fill, old[k].past_min_fill());
    share.skip.push_back(static_cast<uint32_t>(old[k].skip()));
  }
  if (residents.size() > size) {
    share.pending.insert(share.pending.end(), residents.begin() + size,
                         residents.end());
    residents.resize(size);
  }
  share.reservoir = std::move(residents);
  share.random_state = random_state;
  return share;
}

ElasticRequest RequestFor(const ReservoirShare& share) {
  ElasticRequest request{.restore = share.pending, .skip = share.skip};
  request.restore.insert(request.restore.end(), share.reservoir.begin(),
                         share.reservoir.end());
  return request;
}

ReservoirCheckpoint ToCheckpoint(
    const ReservoirShare& share,
    const std::function<uint64_t(uint32_t, uint64_t)>& translate) {
  ReservoirCheckpoint saved;
  const auto append = [&](const std::vector<OldItemRef>& refs, ItemRefs* out) {
    for (const OldItemRef& old : refs) {
      out->add_unit(translate(old.rank, old.ref.unit));
      out->add_index(old.ref.index);
    }
  };
  append(share.pending, saved.mutable_pending());
  append(share.reservoir, saved.mutable_reservoir());
  saved.set_random_state(share.random_state);
  saved.set_past_min_fill(share.past_min_fill);
  return saved;
}

}  // namespace sluice
