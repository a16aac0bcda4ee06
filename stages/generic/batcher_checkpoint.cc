// Batcher's checkpoints (batcher.h): the log of the batches' ends in the
// input, acknowledgements, saving and restoring the state, and its part of
// an elastic resume.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/generic/batcher.h"
#include "stages/generic/internal/held_rows_share.h"
#include "stages/generic/reservoir_checkpoint.h"

namespace sluice {

void Batcher::LogBatchEnd(const BatchEnd& end) {
  if (!log_batches_) return;
  std::lock_guard lock(log_mu_);
  batch_ends_.push_back(end);
}

void Batcher::HoldRows(const ExampleBlock& block, int64_t row, size_t count,
                       HeldRows& held) {
  if (!log_batches_) return;
  std::lock_guard lock(log_mu_);
  if (held == nullptr) {
    held = std::make_shared<std::vector<ItemRef>>();
    held->reserve(batch_size_);
  }
  for (size_t i = 0; i < count; ++i) {
    held->push_back(block.OriginOfRow(row + static_cast<int64_t>(i)).ref);
  }
}

ResumeRequest Batcher::RequestAfter(const BatchEnd& end) const {
  if (upstream() != nullptr &&
      upstream()->resume_unit() == ResumeUnit::kCursors) {
    if (!end.last.has_value()) {
      return ResumeRequest{.from = 0, .skip = resume_skip_};
    }
    return ResumeRequest{.from = end.last->position,
                         .skip = end.last->ordinal + 1};
  }
  return ResumeRequest{.from = end.taken};
}

void Batcher::PrepareCheckpoints() { log_batches_ = true; }

void Batcher::Acknowledge(uint64_t consumed) {
  if (consumed == 0 || !log_batches_) return;
  ResumeRequest done;
  {
    std::lock_guard lock(log_mu_);
    // Batch consumed - 1's end is kept: SaveCheckpoint(consumed) needs it.
    while (batch_log_base_ + 1 < consumed && !batch_ends_.empty()) {
      batch_ends_.pop_front();
      ++batch_log_base_;
    }
    if (batch_log_base_ + 1 != consumed || batch_ends_.empty()) return;
    done = RequestAfter(batch_ends_.front());
  }
  // A cursor's group is still needed (its items from `skip` on). Held rows
  // are read again by reference: their input is not.
  if (upstream() != nullptr) upstream()->Acknowledge(done.from);
}

absl::StatusOr<std::optional<ResumeRequest>> Batcher::SaveCheckpoint(
    const ResumeRequest& downstream, std::string* state) {
  if (!log_batches_) {
    return absl::UnimplementedError(
        absl::StrCat("stage '", name(),
                     "' cannot be checkpointed: it is not on the chain of the "
                     "pipeline's output"));
  }
  if (block_input_ != nullptr &&
      (upstream() == nullptr ||
       upstream()->resume_unit() != ResumeUnit::kCursors)) {
    return absl::UnimplementedError(absl::StrCat(
        "stage '", name(),
        "' cannot be checkpointed: its blocks come from a stage that does "
        "not resume at a row of a block"));
  }
  ResumeRequest request;
  if (downstream.from == 0) {
    // Nothing emitted in this run: it stands where it resumed.
    request = RequestAfter(BatchEnd{});
    request.restore = resume_held_;
  } else {
    std::lock_guard lock(log_mu_);
    const uint64_t last = downstream.from - 1;
    if (last < batch_log_base_ ||
        last - batch_log_base_ >= batch_ends_.size()) {
      return absl::InternalError(absl::StrCat("stage '", name(), "': batch ",
                                              last, " is no longer logged"));
    }
    const BatchEnd& end = batch_ends_[last - batch_log_base_];
    request = RequestAfter(end);
    if (end.held > 0) {
      request.restore.assign(end.held_rows->begin(),
                             end.held_rows->begin() + end.held);
    }
  }
  BatcherCheckpoint saved;
  AppendRefs(request.restore, saved.mutable_held());
  saved.set_skip(request.skip);
  saved.SerializeToString(state);
  return request;
}

absl::Status Batcher::RestoreCheckpoint(const std::string& state) {
  BatcherCheckpoint saved;
  if (!saved.ParseFromString(state) ||
      saved.held().unit_size() != saved.held().index_size()) {
    return absl::InvalidArgumentError("the batcher's state does not parse");
  }
  if (saved.held().unit_size() > 0 &&
      (block_input_ == nullptr || !views_first_)) {
    return absl::InvalidArgumentError(
        "the batcher's state holds rows of a batch being filled, which only "
        "block_order: VIEWS_FIRST with block input saves");
  }
  resume_held_ = RefsOf(saved.held());
  resume_skip_ = saved.skip();
  return absl::OkStatus();
}

absl::StatusOr<std::optional<ElasticRequest>> Batcher::PlanElasticResume(
    const std::vector<std::string>& states, const ElasticRequest& downstream,
    ElasticResume& resume) {
  std::vector<BatcherCheckpoint> old(states.size());
  for (size_t k = 0; k < states.size(); ++k) {
    if (!old[k].ParseFromString(states[k]) ||
        old[k].held().unit_size() != old[k].held().index_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the batcher's state of rank ", k, " does not parse"));
    }
  }
  held_share_ = ShareOfHeldRows(old, resume.rank, resume.world_size);
  if (!held_share_.empty() && (block_input_ == nullptr || !views_first_)) {
    return absl::InvalidArgumentError(
        "the batchers' states hold rows of a batch being filled, which only "
        "block_order: VIEWS_FIRST with block input saves");
  }
  ElasticRequest request = downstream;
  request.restore.insert(request.restore.end(), held_share_.begin(),
                         held_share_.end());
  return request;
}

absl::Status Batcher::FinishElasticResume(const ElasticResume& resume) {
  resume_held_.clear();
  for (const OldItemRef& held : held_share_) {
    resume_held_.push_back({.unit = resume.translate(held.rank, held.ref.unit),
                            .index = held.ref.index});
  }
  held_share_.clear();
  // The merged input starts afresh: nothing of its first group was taken.
  resume_skip_ = 0;
  return absl::OkStatus();
}

}  // namespace sluice
