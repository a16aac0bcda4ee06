// ShufflingChunkPool's checkpoints: saving its state, and resuming from
// one checkpoint or, elastically, from the checkpoints of every rank of a
// run on another number of ranks (stages/lc0/shuffling_chunk_pool.h).
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "stages/lc0/shuffling_chunk_pool.h"

namespace sluice::lc0 {

asio::awaitable<std::optional<
    std::map<std::string, std::shared_ptr<const ChunkSource>, std::less<>>>>
ShufflingChunkPool::IndexNamed(
    const std::map<std::string, std::shared_ptr<ChunkSource>, std::less<>>&
        scanned,
    const std::vector<std::string>& names) {
  // Each file once (several saved sources may be views of one file).
  std::vector<std::shared_ptr<ChunkSource>> named;
  for (const std::string& source_name :
       std::set<std::string>(names.begin(), names.end())) {
    if (auto it = scanned.find(source_name); it != scanned.end()) {
      named.push_back(it->second);
    }
  }
  if (!co_await IndexAll(named)) co_return std::nullopt;
  std::map<std::string, std::shared_ptr<const ChunkSource>, std::less<>>
      indexed;
  for (auto& source : named) indexed[source->name()] = source;
  co_return indexed;
}

asio::awaitable<bool> ShufflingChunkPool::JoinNewer(
    const std::map<std::string, std::shared_ptr<ChunkSource>, std::less<>>&
        scanned,
    const std::string& newest) {
  // Sources newer than every source of the checkpoint arrived since: they
  // join as new ones. Older ones the checkpoint does not name stay out.
  std::vector<std::shared_ptr<ChunkSource>> newer;
  for (const auto& [source_name, source] : scanned) {
    if (source_name > newest) newer.push_back(RankShard(source));
  }
  {
    std::lock_guard lock(mu_);
    indexing_in_flight_ += static_cast<int>(newer.size());
  }
  Wake();
  for (auto& source : newer) {
    IndexJob job{std::move(source), false};
    if (!co_await to_index_.Send(std::move(job), &indexing_meter_)) {
      co_return false;
    }
  }
  co_return true;
}

asio::awaitable<bool> ShufflingChunkPool::IndexRestored(
    std::vector<std::shared_ptr<ChunkSource>> sources) {
  const ChunkPoolCheckpoint& saved = *resume_from_;  // set before Start()
  std::map<std::string, std::shared_ptr<ChunkSource>, std::less<>> scanned;
  for (auto& source : sources) scanned[source->name()] = source;
  std::vector<std::string> names;
  std::string newest_named;
  for (const ChunkPoolCheckpoint::Source& source : saved.source()) {
    newest_named = std::max(newest_named, source.name());
    names.push_back(source.name());
  }
  std::optional<
      std::map<std::string, std::shared_ptr<const ChunkSource>, std::less<>>>
      files = co_await IndexNamed(scanned, names);
  if (!files) co_return false;
  // Each saved source is its file's chunks of its view (this rank's, or
  // an older rank's that an elastic resume kept).
  std::map<uint64_t, std::shared_ptr<const ChunkSource>> usable;
  for (const ChunkPoolCheckpoint::Source& source : saved.source()) {
    auto it = files->find(source.name());
    if (it == files->end()) {
      CountSkip("checkpoint_source_gone", source.size());
      LogWarning("stage ", name(), ": resume: ", source.name(),
                 ", named in the checkpoint, is gone: its ", source.size(),
                 " chunks and the frames they hold are skipped");
      continue;
    }
    std::shared_ptr<const ChunkSource> view =
        ViewOf(it->second, ViewOf(source));
    if (view->size() != source.size() ||
        view->file_size() != source.file_size()) {
      CountSkip("checkpoint_source_changed", source.size());
      LogWarning("stage ", name(), ": resume: ", view->path(),
                 " changed since the checkpoint (", view->size(), " chunks in ",
                 view->file_size(), " bytes, was ", source.size(), " in ",
                 source.file_size(),
                 "): its chunks and the frames they hold are skipped");
      continue;
    }
    usable[source.base()] = std::move(view);
  }
  {
    std::lock_guard lock(mu_);
    window_.Restore(saved,
                    [&usable](const ChunkPoolCheckpoint::Source& source) {
                      auto it = usable.find(source.base());
                      return it == usable.end() ? nullptr : it->second;
                    });
    PlanResumeReads(saved, usable);
    resuming_ = false;
    initial_done_ = true;
  }
  resumed_.notify_all();
  LogInfo("stage ", name(), ": resumed from a checkpoint: ", usable.size(),
          " of ", saved.source_size(), " sources, ", saved.restore_size(),
          " chunks to restore, ", saved.replay_size(), " to replay");
  co_return co_await JoinNewer(scanned, newest_named);
}

asio::awaitable<bool> ShufflingChunkPool::IndexElastic(
    std::vector<std::shared_ptr<ChunkSource>> sources) {
  const ChunkPoolMerge& merge = *merge_;  // set before Start()
  std::map<std::string, std::shared_ptr<ChunkSource>, std::less<>> scanned;
  for (auto& source : sources) scanned[source->name()] = source;
  const std::vector<std::string> names = merge.Names();
  std::optional<
      std::map<std::string, std::shared_ptr<const ChunkSource>, std::less<>>>
      files = co_await IndexNamed(scanned, names);
  if (!files) co_return false;
  ChunkPoolMerge::Result merged =
      merge.Resolve(*files,
                    config_.single_pass() ? std::numeric_limits<uint64_t>::max()
                                          : config_.chunk_pool_size(),
                    config_.single_pass());
  if (merged.gone_chunks > 0) {
    CountSkip("checkpoint_source_gone", merged.gone_chunks);
    LogWarning("stage ", name(), ": resume: ", merged.gone.size(),
               " files named in the checkpoints are gone (first: ",
               merged.gone.front(),
               "): their chunks and the frames they hold are skipped");
  }
  if (merged.changed_chunks > 0) {
    CountSkip("checkpoint_source_changed", merged.changed_chunks);
    LogWarning(
        "stage ", name(), ": resume: ", merged.changed.size(),
        " files changed since the checkpoints (first: ", merged.changed.front(),
        "): their chunks and the frames they hold are skipped");
  }
  {
    std::lock_guard lock(mu_);
    window_.Restore(merged.window,
                    [&merged](const ChunkPoolCheckpoint::Source& source) {
                      return merged.sources[source.base()];
                    });
    for (ChunkPoolMerge::Read& read : merged.restores) {
      planned_.push_back(
          PlannedRead{.draw = {.source = std::move(read.source),
                               .local_index = read.local_index,
                               .number = read.number},
                      .restore_records = std::move(read.records)});
    }
    planned_.push_back(PlannedRead{.end_of_restore = true});
    for (ChunkPoolMerge::Read& read : merged.replays) {
      planned_.push_back(PlannedRead{.draw = {.source = std::move(read.source),
                                              .local_index = read.local_index,
                                              .pass = read.pass,
                                              .number = read.number},
                                     .skip = read.skip,
                                     .window_pass = merged.window.pass()});
    }
    LogInfo("stage ", name(), ": resumed as rank ", rank_, " of ", world_size_,
            " from the checkpoints of ", merge.old_ranks(),
            " ranks: ", merged.restores.size(), " chunks to restore, ",
            merged.replays.size(), " to replay, ", merged.window.pending_size(),
            " left in the pass");
    merge_.reset();  // its old states are no longer needed
    resuming_ = false;
    initial_done_ = true;
  }
  resumed_.notify_all();
  // A named local, not a temporary in the co_await expression (GCC 12 may
  // destroy such a temporary twice).
  const std::string newest = names.empty() ? std::string() : names.back();
  co_return co_await JoinNewer(scanned, newest);
}

void ShufflingChunkPool::PlanResumeReads(
    const ChunkPoolCheckpoint& saved,
    const std::map<uint64_t, std::shared_ptr<const ChunkSource>>& usable) {
  const auto locate = [&](uint64_t number, uint64_t pass) {
    ChunkWindow::Draw draw{.pass = pass, .number = number};
    if (const ChunkWindow::SourceRecord* record = window_.RecordOf(number)) {
      if (auto it = usable.find(record->base); it != usable.end()) {
        draw.source = it->second;
        draw.local_index = number - record->base;
      }
    }
    return draw;
  };
  for (const ChunkPoolCheckpoint::Restore& restore : saved.restore()) {
    PlannedRead read{.draw = locate(restore.chunk(), 0)};
    read.restore_records.assign(restore.records().begin(),
                                restore.records().end());
    planned_.push_back(std::move(read));
  }
  planned_.push_back(PlannedRead{.end_of_restore = true});
  for (const ChunkPoolCheckpoint::Replay& replay : saved.replay()) {
    planned_.push_back(
        PlannedRead{.draw = locate(replay.chunk(), replay.pass()),
                    .skip = replay.skip(),
                    .window_pass = WindowPassOf(replay)});
  }
}

void ShufflingChunkPool::Acknowledge(uint64_t consumed) {
  std::lock_guard lock(mu_);
  while (!draw_log_.empty() && draw_log_.front().position < consumed) {
    draw_log_.pop_front();
  }
}

absl::StatusOr<std::optional<ResumeRequest>> ShufflingChunkPool::SaveCheckpoint(
    const ResumeRequest& downstream, std::string* state) {
  ChunkPoolCheckpoint saved;
  std::set<uint64_t> referenced;
  {
    std::unique_lock lock(mu_);
    if (resuming_ && merge_.has_value()) {
      // An elastic resume's window exists once its files are indexed.
      resumed_.wait(lock,
                    [this] { return !resuming_ || abort_signal().aborted(); });
      if (resuming_) {
        return absl::CancelledError(
            absl::StrCat("stage '", name(), "' was stopped while resuming"));
      }
    }
    if (resuming_) {
      // Nothing was drawn yet: the state is the one it resumes from.
      resume_from_->SerializeToString(state);
      return std::nullopt;
    }
    if (!initial_done_) {
      // Nothing was drawn yet either: the resumed pool starts afresh.
      saved.set_started(false);
      saved.SerializeToString(state);
      return std::nullopt;
    }
    saved.set_started(true);
    window_.Save(&saved);
    if (!draw_log_.empty() && draw_log_.front().position > downstream.from) {
      return absl::InternalError(
          absl::StrCat("stage '", name(), "': chunk ", downstream.from,
                       " of the output is no longer logged"));
    }
    for (const LoggedDraw& draw : draw_log_) {
      if (draw.position < downstream.from) continue;
      ChunkPoolCheckpoint::Replay& replay = *saved.add_replay();
      replay.set_chunk(draw.number);
      replay.set_pass(draw.pass);
      if (draw.skip > 0) replay.set_skip(draw.skip);
      if (draw.window_pass != draw.pass) {
        replay.set_window_pass(draw.window_pass);
      }
      referenced.insert(draw.number);
    }
    // A resumed run's planned reads not drawn yet (no window draw has
    // happened while any is left).
    for (const PlannedRead& read : planned_) {
      if (read.end_of_restore || !read.restore_records.empty()) continue;
      ChunkPoolCheckpoint::Replay& replay = *saved.add_replay();
      replay.set_chunk(read.draw.number);
      replay.set_pass(read.draw.pass);
      if (read.skip > 0) replay.set_skip(read.skip);
      if (read.window_pass != read.draw.pass) {
        replay.set_window_pass(read.window_pass);
      }
      referenced.insert(read.draw.number);
    }
    std::map<uint64_t, std::vector<uint32_t>> restore;
    for (const ItemRef& ref : downstream.restore) {
      restore[ref.unit].push_back(ref.index);
      referenced.insert(ref.unit);
    }
    for (auto& [chunk, records] : restore) {
      std::sort(records.begin(), records.end());
      records.erase(std::unique(records.begin(), records.end()), records.end());
      ChunkPoolCheckpoint::Restore& out = *saved.add_restore();
      out.set_chunk(chunk);
      out.mutable_records()->Add(records.begin(), records.end());
    }
    // The sources out of the window that references name.
    std::set<uint64_t> bases;
    for (const ChunkPoolCheckpoint::Source& source : saved.source()) {
      bases.insert(source.base());
    }
    for (const uint64_t number : referenced) {
      const ChunkWindow::SourceRecord* record = window_.RecordOf(number);
      if (record == nullptr || !bases.insert(record->base).second) continue;
      ChunkPoolCheckpoint::Source& source = *saved.add_source();
      source.set_name(record->name);
      source.set_base(record->base);
      source.set_size(record->size);
      source.set_file_size(record->file_size);
      source.set_in_window(false);
      if (record->view.world_size > 1) {
        source.set_view_rank(record->view.rank);
        source.set_view_world_size(record->view.world_size);
      }
    }
  }
  saved.SerializeToString(state);
  return std::nullopt;
}

absl::Status ShufflingChunkPool::RestoreCheckpoint(const std::string& state) {
  ChunkPoolCheckpoint saved;
  if (!saved.ParseFromString(state)) {
    return absl::InvalidArgumentError("the chunk pool's state does not parse");
  }
  if (!saved.started()) {
    // Taken before start-up ended: start afresh; the next stage still
    // waits for the end of its (empty) restore.
    planned_.push_back(PlannedRead{.end_of_restore = true});
    return absl::OkStatus();
  }
  if (saved.low() > saved.end()) {
    return absl::InvalidArgumentError(
        "the chunk pool's window ends before it starts");
  }
  for (const uint64_t number : saved.pending()) {
    if (number >= saved.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the chunk pool's pass holds chunk ", number,
                       " beyond the window's end ", saved.end()));
    }
  }
  for (const ChunkPoolCheckpoint::Source& source : saved.source()) {
    if (source.size() == 0 || source.base() + source.size() < source.base() ||
        (source.in_window() && source.base() + source.size() > saved.end())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the chunk pool's source '", source.name(), "' has a bad range"));
    }
  }
  resume_from_ = std::move(saved);
  resuming_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<ElasticRequest>>
ShufflingChunkPool::PlanElasticResume(const std::vector<std::string>& states,
                                      const ElasticRequest& downstream,
                                      ElasticResume& resume) {
  std::vector<ChunkPoolCheckpoint> old(states.size());
  for (size_t k = 0; k < states.size(); ++k) {
    if (!old[k].ParseFromString(states[k])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the chunk pool's state of rank ", k, " does not parse"));
    }
  }
  merge_.emplace(std::move(old), rank_, world_size_);
  merge_->Request(downstream);
  resume.translate = [this](uint32_t old_rank, uint64_t unit) {
    return merge_->Translate(old_rank, unit);
  };
  return std::nullopt;
}

absl::Status ShufflingChunkPool::FinishElasticResume(
    const ElasticResume& resume) {
  if (!merge_->started()) {
    // No old pool had started: start afresh (the next stage still waits
    // for the end of its empty restore).
    merge_.reset();
    planned_.push_back(PlannedRead{.end_of_restore = true});
    return absl::OkStatus();
  }
  resuming_ = true;
  return absl::OkStatus();
}

}  // namespace sluice::lc0
