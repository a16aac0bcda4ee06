// ShufflingChunkPool's checkpoints: the draw log trimmed by
// acknowledgements, saving the window with the draws to replay and the
// chunks to restore, and resuming: checking the saved state, restoring the
// window over the sources still there and planning the first reads.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "stages/lc0/shuffling_chunk_pool.h"

namespace sluice::lc0 {

asio::awaitable<bool> ShufflingChunkPool::IndexRestored(
    std::vector<std::shared_ptr<ChunkSource>> sources) {
  const ChunkPoolCheckpoint& saved = *resume_from_;  // set before Start()
  std::map<std::string, std::shared_ptr<ChunkSource>, std::less<>> by_name;
  for (auto& source : sources) by_name[source->name()] = source;
  std::vector<std::shared_ptr<ChunkSource>> named;
  std::string newest_named;
  for (const ChunkPoolCheckpoint::Source& source : saved.source()) {
    newest_named = std::max(newest_named, source.name());
    if (auto it = by_name.find(source.name()); it != by_name.end()) {
      named.push_back(it->second);
    }
  }
  if (!co_await IndexAll(named)) co_return false;
  static RateLimiter limiter(absl::Seconds(5));
  std::map<std::string, std::shared_ptr<const ChunkSource>, std::less<>> usable;
  for (const ChunkPoolCheckpoint::Source& source : saved.source()) {
    auto it = by_name.find(source.name());
    if (it == by_name.end()) {
      CountSkip("checkpoint_source_gone", source.size());
      LogWarning("stage ", name(), ": resume: ", source.name(),
                 ", named in the checkpoint, is gone: its ", source.size(),
                 " chunks and the frames they hold are skipped");
      continue;
    }
    if (it->second->size() != source.size() ||
        it->second->file_size() != source.file_size()) {
      CountSkip("checkpoint_source_changed", source.size());
      LogWarning("stage ", name(), ": resume: ", it->second->path(),
                 " changed since the checkpoint (", it->second->size(),
                 " chunks in ", it->second->file_size(), " bytes, was ",
                 source.size(), " in ", source.file_size(),
                 "): its chunks and the frames they hold are skipped");
      continue;
    }
    usable[source.name()] = it->second;
  }
  // Sources newer than every source of the checkpoint arrived since: they
  // join as new ones. Older ones the checkpoint does not name stay out.
  std::vector<std::shared_ptr<ChunkSource>> newer;
  for (auto& [source_name, source] : by_name) {
    if (source_name > newest_named) newer.push_back(source);
  }
  {
    std::lock_guard lock(mu_);
    window_.Restore(saved, [&usable](const std::string& source_name) {
      auto it = usable.find(source_name);
      return it == usable.end() ? nullptr : it->second;
    });
    PlanResumeReads(saved, usable);
    resuming_ = false;
    initial_done_ = true;
    indexing_in_flight_ += static_cast<int>(newer.size());
  }
  LogInfo("stage ", name(), ": resumed from a checkpoint: ", usable.size(),
          " of ", saved.source_size(), " sources, ", saved.restore_size(),
          " chunks to restore, ", saved.replay_size(), " to replay, ",
          newer.size(), " new sources");
  Wake();
  for (auto& source : newer) {
    IndexJob job{std::move(source), false};
    if (!co_await to_index_.Send(std::move(job), &indexing_meter_)) {
      co_return false;
    }
  }
  co_return true;
}

void ShufflingChunkPool::PlanResumeReads(
    const ChunkPoolCheckpoint& saved,
    const std::map<std::string, std::shared_ptr<const ChunkSource>,
                   std::less<>>& usable) {
  const auto locate = [&](uint64_t number, uint64_t pass) {
    ChunkWindow::Draw draw{.pass = pass, .number = number};
    if (const ChunkWindow::SourceRecord* record = window_.RecordOf(number)) {
      if (auto it = usable.find(record->name); it != usable.end()) {
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
        PlannedRead{.draw = locate(replay.chunk(), replay.pass())});
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
    std::lock_guard lock(mu_);
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
      referenced.insert(draw.number);
    }
    // A resumed run's planned reads not drawn yet (no window draw has
    // happened while any is left).
    for (const PlannedRead& read : planned_) {
      if (read.end_of_restore || !read.restore_records.empty()) continue;
      ChunkPoolCheckpoint::Replay& replay = *saved.add_replay();
      replay.set_chunk(read.draw.number);
      replay.set_pass(read.draw.pass);
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

}  // namespace sluice::lc0
