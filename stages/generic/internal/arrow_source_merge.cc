#include "stages/generic/internal/arrow_source_merge.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/rank_shard.h"

namespace sluice {
namespace {

std::string Describe(const ArrowSourceCheckpoint::File& file) {
  return absl::StrCat("'", file.path(), "' (", file.rows(), " rows, ",
                      file.size(), " bytes)");
}

// OK when old ranks `a` and `b` surveyed the same data set.
absl::Status CheckSameDataSet(const ArrowSourceCheckpoint& a, uint32_t rank_a,
                              const ArrowSourceCheckpoint& b, uint32_t rank_b) {
  const std::string ranks = absl::StrCat(
      "the checkpoints of ranks ", rank_a, " and ", rank_b,
      " were taken over different data sets (not the checkpoints of one "
      "run): ");
  for (int i = 0; i < std::min(a.file_size(), b.file_size()); ++i) {
    const ArrowSourceCheckpoint::File& x = a.file(i);
    const ArrowSourceCheckpoint::File& y = b.file(i);
    if (x.path() != y.path() || x.rows() != y.rows() || x.size() != y.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          ranks, "file ", i, " is ", Describe(x), " against ", Describe(y)));
    }
  }
  if (a.file_size() != b.file_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ranks, a.file_size(), " files against ", b.file_size()));
  }
  return absl::OkStatus();
}

// Appends to `merged` new rank `rank`'s part of the rows [begin, end) of
// file `file` in pass `pass`; `name` picks which rank takes the first part.
void AddShareOfRun(uint64_t pass, uint32_t file, int64_t begin, int64_t end,
                   const std::string& name, uint32_t rank, uint32_t world_size,
                   ArrowSourceCheckpoint& merged) {
  if (end <= begin) return;
  const RowRange mine =
      RowsOfRank(name, static_cast<uint64_t>(end - begin), rank, world_size);
  if (mine.begin >= mine.end) return;
  ArrowSourceCheckpoint::RowRun& run = *merged.add_rest_of_pass();
  run.set_pass(pass);
  run.set_file(file);
  run.set_begin(begin + static_cast<int64_t>(mine.begin));
  run.set_end(begin + static_cast<int64_t>(mine.end));
}

}  // namespace

ArrowDataset SavedDataSet(const ArrowSourceCheckpoint& saved) {
  ArrowDataset dataset;
  for (const ArrowSourceCheckpoint::File& file : saved.file()) {
    dataset.push_back(std::make_unique<ArrowDatasetFile>(
        ArrowDatasetFile{.path = file.path(),
                         .rows = file.rows(),
                         .number = static_cast<uint32_t>(dataset.size())}));
  }
  return dataset;
}

absl::StatusOr<ArrowSourceCheckpoint> MergeArrowSourceStates(
    const std::vector<std::string>& states, const ElasticRequest& downstream,
    const ArrowPassOrder& order, uint32_t rank, uint32_t world_size) {
  const auto old_ranks = static_cast<uint32_t>(states.size());
  std::vector<ArrowSourceCheckpoint> old(old_ranks);
  int first_started = -1;
  for (uint32_t k = 0; k < old_ranks; ++k) {
    if (!old[k].ParseFromString(states[k])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the Arrow source's state of rank ", k, " does not parse"));
    }
    if (!old[k].started()) continue;
    if (old[k].row() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("the Arrow source's state of rank ", k,
                       " resumes at a negative row"));
    }
    if (first_started < 0) {
      first_started = static_cast<int>(k);
    } else {
      const absl::Status same =
          CheckSameDataSet(old[first_started], first_started, old[k], k);
      if (!same.ok()) return same;
    }
  }
  ArrowSourceCheckpoint merged;
  if (first_started < 0) {  // no old source had begun: start afresh
    merged.set_started(false);
    return merged;
  }
  merged.set_started(true);
  *merged.mutable_file() = old[first_started].file();
  const ArrowDataset dataset = SavedDataSet(merged);
  // The runs old ranks had been given and not yet read.
  for (uint32_t k = 0; k < old_ranks; ++k) {
    for (int i = 0; i < old[k].rest_of_pass_size(); ++i) {
      const ArrowSourceCheckpoint::RowRun& run = old[k].rest_of_pass(i);
      if (run.file() >= dataset.size()) continue;
      AddShareOfRun(run.pass(), run.file(), run.begin(), run.end(),
                    absl::StrCat(dataset[run.file()]->path, "/", k, "/", i),
                    rank, world_size, merged);
    }
  }
  // The rest of each old rank's interrupted pass (all of its shard of
  // pass 0 when it had not begun).
  std::set<uint64_t> passes;
  for (const ArrowSourceCheckpoint& state : old) {
    passes.insert(state.started() ? state.pass() : 0);
  }
  for (const uint64_t pass : passes) {
    const std::vector<const ArrowDatasetFile*> files =
        FilesOfPass(dataset, order.train, order.seed + pass);
    for (uint64_t slot = 0; slot < files.size(); ++slot) {
      const ArrowDatasetFile& file = *files[slot];
      const std::string name =
          std::filesystem::path(file.path).filename().string();
      for (uint32_t k = 0; k < old_ranks; ++k) {
        const ArrowSourceCheckpoint& state = old[k];
        const uint64_t old_pass = state.started() ? state.pass() : 0;
        const uint64_t old_slot = state.started() ? state.slot() : 0;
        if (old_pass != pass || slot < old_slot) continue;
        const RowRange shard =
            RowsOfRank(name, static_cast<uint64_t>(file.rows), k, old_ranks);
        int64_t begin = static_cast<int64_t>(shard.begin);
        if (slot == old_slot && state.started()) {
          begin = std::max(begin, state.row());
        }
        AddShareOfRun(pass, file.number, begin, static_cast<int64_t>(shard.end),
                      absl::StrCat(name, "/", k), rank, world_size, merged);
      }
    }
  }
  // The stream goes on after the furthest interrupted pass: its end.
  merged.set_pass(*passes.rbegin());
  merged.set_slot(dataset.size());
  merged.set_row(0);
  for (const OldItemRef& item : downstream.restore) {
    merged.mutable_restore()->add_unit(item.ref.unit);
    merged.mutable_restore()->add_index(item.ref.index);
  }
  return merged;
}

}  // namespace sluice
