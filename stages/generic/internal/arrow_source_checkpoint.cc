#include "stages/generic/internal/arrow_source_checkpoint.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"

namespace sluice {

absl::Status ArrowCheckpointState::Restore(const std::string& state) {
  ArrowSourceCheckpoint saved;
  if (!saved.ParseFromString(state) ||
      saved.restore().unit_size() != saved.restore().index_size()) {
    return absl::InvalidArgumentError(
        "the Arrow source's state does not parse");
  }
  if (saved.started() && saved.row() < 0) {
    return absl::InvalidArgumentError(
        "the Arrow source's state resumes at a negative row");
  }
  for (const ArrowSourceCheckpoint::RowRun& run : saved.rest_of_pass()) {
    if (run.begin() < 0 || run.end() < run.begin()) {
      return absl::InvalidArgumentError(
          "the Arrow source's state holds a run of rows that ends before it "
          "begins");
    }
  }
  start_ = {.pass = saved.pass(), .slot = saved.slot(), .row = saved.row()};
  start_phase_ = saved.block_phase();
  rest_of_pass_.assign(saved.rest_of_pass().begin(),
                       saved.rest_of_pass().end());
  if (!saved.started()) {
    start_ = {};
    start_phase_ = 0;
    rest_of_pass_.clear();
  }
  resume_from_ = std::move(saved);
  return absl::OkStatus();
}

void ArrowCheckpointState::MarkSurveyed() {
  std::lock_guard lock(mu_);
  surveyed_ = true;
}

uint64_t ArrowCheckpointState::LogRead(uint64_t pass, uint64_t slot,
                                       int64_t from_row, int64_t phase,
                                       int64_t run) {
  std::lock_guard lock(mu_);
  const uint64_t position = next_position_++;
  if (logging_) {
    reads_.push_back({.position = position,
                      .pass = pass,
                      .slot = slot,
                      .run = run,
                      .phase_at_row0 = phase - from_row});
  }
  return position;
}

void ArrowCheckpointState::Acknowledge(uint64_t consumed) {
  std::lock_guard lock(mu_);
  while (!reads_.empty() && reads_.front().position < consumed) {
    reads_.pop_front();
  }
}

absl::Status ArrowCheckpointState::Save(const ResumeRequest& downstream,
                                        const ArrowDataset& dataset,
                                        const std::string& stage,
                                        std::string* state) {
  if (!logging_) {
    return absl::UnimplementedError(
        absl::StrCat("stage '", stage,
                     "' cannot be checkpointed: it is not on the chain of the "
                     "pipeline's output"));
  }
  ArrowSourceCheckpoint saved;
  {
    std::lock_guard lock(mu_);
    if (!surveyed_) {
      // Nothing read yet: the state is the one it resumes from, if any.
      if (resume_from_.has_value()) {
        saved = *resume_from_;
        saved.clear_restore();
      } else {
        saved.set_started(false);
      }
    } else {
      saved.set_started(true);
      for (const std::unique_ptr<ArrowDatasetFile>& file : dataset) {
        ArrowSourceCheckpoint::File& out = *saved.add_file();
        out.set_path(file->path);
        out.set_rows(file->rows);
        out.set_size(file->size);
      }
      const auto read = std::find_if(
          reads_.begin(), reads_.end(), [&](const LoggedRead& logged) {
            return logged.position == downstream.from;
          });
      if (read != reads_.end() && read->run >= 0) {
        // Within the rest of a pass: the runs from this one on, then the
        // stream from its start.
        for (auto run = rest_of_pass_.begin() + read->run;
             run != rest_of_pass_.end(); ++run) {
          *saved.add_rest_of_pass() = *run;
        }
        ArrowSourceCheckpoint::RowRun& first = *saved.mutable_rest_of_pass(0);
        first.set_begin(std::max<int64_t>(first.begin(), downstream.skip));
        saved.set_pass(start_.pass);
        saved.set_slot(start_.slot);
        saved.set_row(start_.row);
        saved.set_block_phase(read->phase_at_row0 + first.begin());
      } else if (read != reads_.end()) {
        saved.set_pass(read->pass);
        saved.set_slot(read->slot);
        saved.set_row(downstream.skip);
        saved.set_block_phase(read->phase_at_row0 + downstream.skip);
      } else if (downstream.from == 0 && next_position_ == 0) {
        for (const ArrowSourceCheckpoint::RowRun& run : rest_of_pass_) {
          *saved.add_rest_of_pass() = run;
        }
        saved.set_pass(start_.pass);
        saved.set_slot(start_.slot);
        saved.set_row(start_.row);
        saved.set_block_phase(start_phase_);
      } else {
        return absl::InternalError(
            absl::StrCat("stage '", stage, "': file read ", downstream.from,
                         " of the stream is no longer logged"));
      }
    }
  }
  for (const ItemRef& ref : downstream.restore) {
    saved.mutable_restore()->add_unit(ref.unit);
    saved.mutable_restore()->add_index(ref.index);
  }
  saved.SerializeToString(state);
  return absl::OkStatus();
}

int64_t AdoptSavedDataSet(const ArrowSourceCheckpoint& saved,
                          ArrowDataset& dataset,
                          const ResumeWarningFunction& warn) {
  std::map<std::string, std::unique_ptr<ArrowDatasetFile>, std::less<>>
      surveyed;
  for (std::unique_ptr<ArrowDatasetFile>& file : dataset) {
    surveyed.emplace(file->path, std::move(file));
  }
  dataset.clear();
  int64_t offset = 0;
  for (const ArrowSourceCheckpoint::File& saved_file : saved.file()) {
    std::unique_ptr<ArrowDatasetFile> file;
    auto it = surveyed.find(saved_file.path());
    if (it != surveyed.end() && it->second->rows == saved_file.rows() &&
        it->second->size == saved_file.size()) {
      file = std::move(it->second);
    } else {
      const bool changed = it != surveyed.end();
      warn(changed ? "checkpoint_source_changed" : "checkpoint_source_gone", 1,
           absl::StrCat(saved_file.path(),
                        changed ? " has changed" : " is gone (or unreadable)",
                        " since the checkpoint; its rows are skipped"));
      file = std::make_unique<ArrowDatasetFile>(ArrowDatasetFile{
          .path = saved_file.path(), .rows = saved_file.rows(), .gone = true});
    }
    if (it != surveyed.end()) surveyed.erase(it);
    file->offset = offset;
    file->number = static_cast<uint32_t>(dataset.size());
    offset += file->rows;
    dataset.push_back(std::move(file));
  }
  if (!surveyed.empty()) {
    warn("checkpoint_source_new", surveyed.size(),
         absl::StrCat(surveyed.size(),
                      " Arrow files are new since the checkpoint (e.g. ",
                      surveyed.begin()->first,
                      "); the resumed run reads the checkpoint's data set "
                      "only"));
  }
  return offset;
}

std::map<std::pair<uint64_t, uint32_t>, std::vector<int64_t>> RestoredRows(
    const ArrowSourceCheckpoint& saved) {
  std::map<std::pair<uint64_t, uint32_t>, std::vector<int64_t>> wanted;
  const ItemRefs& restore = saved.restore();
  for (int i = 0; i < restore.unit_size(); ++i) {
    wanted[{restore.unit(i) >> 32, static_cast<uint32_t>(restore.unit(i))}]
        .push_back(restore.index(i));
  }
  for (auto& [key, rows] : wanted) {
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  return wanted;
}

}  // namespace sluice
