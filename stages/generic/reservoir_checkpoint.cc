#include "stages/generic/reservoir_checkpoint.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

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

}  // namespace sluice
