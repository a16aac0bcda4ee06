#include "stages/lc0/internal/chunk_pool_merge.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "engine/rank_shard.h"
#include "engine/stable_hash.h"

namespace sluice::lc0 {
namespace {

// The number of no chunk.
constexpr uint64_t kNoChunk = std::numeric_limits<uint64_t>::max();

// The pass `old` was taking in when it saved: its window's pass when it
// drew its first replay (replays come in draw order), or its window's
// pass when it had none.
uint64_t InterruptedPass(const ChunkPoolCheckpoint& old) {
  return old.replay().empty() ? old.pass() : WindowPassOf(old.replay(0));
}

}  // namespace

std::shared_ptr<const ChunkSource> ViewOf(
    const std::shared_ptr<const ChunkSource>& file, ChunkWindow::View view) {
  if (view.world_size <= 1) return file;
  return file->IndexedView([view](std::string_view name, uint64_t index) {
    return ChunkRank(name, index, view.world_size) == view.rank;
  });
}

ChunkWindow::View ViewOf(const ChunkPoolCheckpoint::Source& source) {
  return {.rank = source.view_rank(),
          .world_size = std::max<uint32_t>(source.view_world_size(), 1)};
}

ChunkPoolMerge::ChunkPoolMerge(std::vector<ChunkPoolCheckpoint> old,
                               uint32_t rank, uint32_t world_size)
    : old_(std::move(old)),
      rank_(rank),
      world_size_(world_size),
      records_(old_.size()),
      skip_(old_.size(), 0) {
  for (size_t k = 0; k < old_.size(); ++k) {
    for (const ChunkPoolCheckpoint::Source& source : old_[k].source()) {
      records_[k].push_back({&source, records_end_});
      records_end_ += source.size();
    }
    std::sort(records_[k].begin(), records_[k].end(),
              [](const OldRecord& a, const OldRecord& b) {
                return a.source->base() < b.source->base();
              });
  }
}

bool ChunkPoolMerge::started() const {
  return std::any_of(
      old_.begin(), old_.end(),
      [](const ChunkPoolCheckpoint& old) { return old.started(); });
}

std::vector<std::string> ChunkPoolMerge::Names() const {
  std::set<std::string> names;
  for (const ChunkPoolCheckpoint& old : old_) {
    for (const ChunkPoolCheckpoint::Source& source : old.source()) {
      names.insert(source.name());
    }
  }
  return {names.begin(), names.end()};
}

const ChunkPoolMerge::OldRecord* ChunkPoolMerge::RecordOf(
    uint32_t k, uint64_t number) const {
  if (k >= records_.size()) return nullptr;
  const std::vector<OldRecord>& records = records_[k];
  auto it = std::upper_bound(records.begin(), records.end(), number,
                             [](uint64_t value, const OldRecord& record) {
                               return value < record.source->base();
                             });
  if (it == records.begin()) return nullptr;
  --it;
  return number - it->source->base() < it->source->size() ? &*it : nullptr;
}

uint64_t ChunkPoolMerge::Translate(uint32_t old_rank, uint64_t number) const {
  const OldRecord* record = RecordOf(old_rank, number);
  if (record == nullptr) return kNoChunk;
  return record->base + (number - record->source->base());
}

void ChunkPoolMerge::Request(const ElasticRequest& request) {
  for (const OldItemRef& old : request.restore) {
    const uint64_t number = Translate(old.rank, old.ref.unit);
    if (number != kNoChunk) restore_[number].push_back(old.ref.index);
  }
  for (auto& [number, records] : restore_) {
    std::sort(records.begin(), records.end());
    records.erase(std::unique(records.begin(), records.end()), records.end());
  }
  for (size_t k = 0; k < skip_.size() && k < request.skip.size(); ++k) {
    skip_[k] = request.skip[k];
  }
}

ChunkPoolMerge::Result ChunkPoolMerge::Resolve(
    const std::map<std::string, std::shared_ptr<const ChunkSource>,
                   std::less<>>& files,
    uint64_t capacity, bool single_pass) const {
  Result result;
  ChunkPoolCheckpoint& window = result.window;
  window.set_started(true);
  // The old records, numbered first, each through its own view; a file
  // gone, or changed (another size, or another chunk count of the view),
  // leaves its records without a source.
  std::map<std::tuple<std::string, uint32_t, uint32_t>,
           std::shared_ptr<const ChunkSource>>
      views;
  std::set<std::string> gone, changed;
  std::vector<std::vector<std::shared_ptr<const ChunkSource>>> old_views(
      old_.size());
  // The merged base of each old record, for the restores' lookup.
  std::map<uint64_t, std::pair<uint32_t, const OldRecord*>> by_base;
  for (uint32_t k = 0; k < old_.size(); ++k) {
    for (const OldRecord& record : records_[k]) {
      const ChunkPoolCheckpoint::Source& saved = *record.source;
      std::shared_ptr<const ChunkSource> view;
      auto file = files.find(saved.name());
      if (file == files.end()) {
        gone.insert(saved.name());
        result.gone_chunks += saved.size();
      } else {
        const ChunkWindow::View wanted = ViewOf(saved);
        auto& cached = views[{saved.name(), wanted.rank, wanted.world_size}];
        if (cached == nullptr) cached = ViewOf(file->second, wanted);
        if (cached->size() != saved.size() ||
            file->second->file_size() != saved.file_size()) {
          changed.insert(saved.name());
          result.changed_chunks += saved.size();
        } else {
          view = cached;
        }
      }
      old_views[k].push_back(view);
      by_base[record.base] = {k, &record};
      ChunkPoolCheckpoint::Source& out = *window.add_source();
      out.set_name(saved.name());
      out.set_base(record.base);
      out.set_size(saved.size());
      out.set_file_size(saved.file_size());
      out.set_in_window(false);
      out.set_view_rank(saved.view_rank());
      out.set_view_world_size(saved.view_world_size());
      result.sources[record.base] = view;
    }
  }
  const auto old_view = [&](uint32_t k, const OldRecord* record) {
    return old_views[k][record - records_[k].data()];
  };
  // The new window: this rank's view of every file of an old window, in
  // name order, after the old records.
  std::set<std::string> window_names;
  for (const ChunkPoolCheckpoint& old : old_) {
    for (const ChunkPoolCheckpoint::Source& source : old.source()) {
      if (source.in_window()) window_names.insert(source.name());
    }
  }
  struct NewSource {
    std::shared_ptr<const ChunkSource> view;
    uint64_t base;
  };
  std::map<std::string, NewSource, std::less<>> fresh;
  uint64_t end = records_end_;
  const ChunkWindow::View mine{.rank = rank_, .world_size = world_size_};
  for (const std::string& name : window_names) {
    auto file = files.find(name);
    if (file == files.end() || changed.contains(name)) continue;
    std::shared_ptr<const ChunkSource> view = ViewOf(file->second, mine);
    if (view->size() == 0) continue;
    fresh[name] = {view, end};
    end += view->size();
  }
  uint64_t low = records_end_;
  if (!single_pass && end - records_end_ > capacity) low = end - capacity;
  for (const auto& [name, source] : fresh) {
    ChunkPoolCheckpoint::Source& out = *window.add_source();
    out.set_name(name);
    out.set_base(source.base);
    out.set_size(source.view->size());
    out.set_file_size(source.view->file_size());
    out.set_in_window(source.base + source.view->size() > low);
    out.set_view_rank(mine.rank);
    out.set_view_world_size(mine.world_size);
    result.sources[source.base] = source.view;
  }
  window.set_low(low);
  window.set_end(end);
  // The chunk an old number names, if it falls to this rank: its file's
  // name and its index in the file.
  struct Located {
    const OldRecord* record;
    std::shared_ptr<const ChunkSource> view;
    uint64_t local_index;
    uint64_t index_in_file;
  };
  const auto locate = [&](uint32_t k,
                          uint64_t number) -> std::optional<Located> {
    const OldRecord* record = RecordOf(k, number);
    if (record == nullptr) return std::nullopt;
    std::shared_ptr<const ChunkSource> view = old_view(k, record);
    const uint64_t j = number - record->source->base();
    if (view == nullptr || j >= view->size()) return std::nullopt;
    return Located{record, view, j, view->location(j).index_in_source};
  };
  const auto mine_to_take = [&](const Located& chunk) {
    return ChunkRank(chunk.record->source->name(), chunk.index_in_file,
                     world_size_) == rank_;
  };
  // The pass: what no old rank had drawn yet in its interrupted pass, of
  // this rank's share.
  std::vector<uint64_t> pending;
  uint64_t pass = 0, dropped = 0,
           random_state = HashCombine(rank_, world_size_);
  std::string anchor;
  for (uint32_t k = 0; k < old_.size(); ++k) {
    const ChunkPoolCheckpoint& old = old_[k];
    const uint64_t interrupted = InterruptedPass(old);
    pass = std::max(pass, interrupted);
    dropped += old.dropped();
    random_state = HashCombine(random_state, old.random_state());
    anchor = std::max(anchor, old.anchor());
    // A window gone on into a later pass had drawn all of this one.
    if (old.pass() != interrupted) continue;
    for (const uint64_t number : old.pending()) {
      if (number < old.low()) continue;
      const std::optional<Located> chunk = locate(k, number);
      if (!chunk || !mine_to_take(*chunk)) continue;
      auto source = fresh.find(chunk->record->source->name());
      if (source == fresh.end()) continue;
      const ChunkSource& view = *source->second.view;
      // The view's chunks are in file order.
      size_t first = 0, last = view.size();
      while (first < last) {
        const size_t middle = (first + last) / 2;
        if (view.location(middle).index_in_source < chunk->index_in_file) {
          first = middle + 1;
        } else {
          last = middle;
        }
      }
      if (first == view.size() ||
          view.location(first).index_in_source != chunk->index_in_file) {
        continue;
      }
      const uint64_t merged = source->second.base + first;
      if (merged >= low) pending.push_back(merged);
    }
  }
  // An old rank checkpointed before its pool started had drawn nothing:
  // all of its shard of the window is still to come.
  const auto old_world_size = static_cast<uint32_t>(old_.size());
  for (uint32_t k = 0; k < old_world_size; ++k) {
    if (old_[k].started()) continue;
    for (const auto& [name, source] : fresh) {
      const ChunkSource& view = *source.view;
      for (size_t j = 0; j < view.size(); ++j) {
        const uint64_t merged = source.base + j;
        if (merged >= low && ChunkRank(name, view.location(j).index_in_source,
                                       old_world_size) == k) {
          pending.push_back(merged);
        }
      }
    }
  }
  std::sort(pending.begin(), pending.end());
  pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
  window.mutable_pending()->Add(pending.begin(), pending.end());
  window.set_pass(pass);
  window.set_dropped(dropped);
  window.set_random_state(random_state);
  window.set_anchor(anchor);
  uint64_t since_anchor = 0;
  for (const auto& [name, source] : fresh) {
    if (name > anchor) since_anchor += source.view->size();
  }
  window.set_chunks_since_anchor(since_anchor);
  // Restores: the records the stage below asked for, from the old views.
  for (const auto& [number, records] : restore_) {
    Read read{.number = number, .records = records};
    auto it = by_base.upper_bound(number);
    if (it != by_base.begin()) {
      --it;
      const auto [k, record] = it->second;
      const uint64_t j = number - record->base;
      if (std::shared_ptr<const ChunkSource> view = old_view(k, record);
          view != nullptr && j < view->size()) {
        read.source = view;
        read.local_index = j;
      }
    }
    result.restores.push_back(std::move(read));
  }
  // Replays: each old rank's of its interrupted pass, where they fall to
  // this rank, the first less what that rank's reservoir had taken of it.
  for (uint32_t k = 0; k < old_.size(); ++k) {
    const uint64_t interrupted = InterruptedPass(old_[k]);
    bool first = true;
    for (const ChunkPoolCheckpoint::Replay& replay : old_[k].replay()) {
      if (WindowPassOf(replay) != interrupted) continue;  // drawn ahead
      uint32_t skip = replay.skip();
      if (first) skip = std::max(skip, skip_[k]);
      first = false;
      const std::optional<Located> chunk = locate(k, replay.chunk());
      if (!chunk || !mine_to_take(*chunk)) continue;
      result.replays.push_back({.source = chunk->view,
                                .local_index = chunk->local_index,
                                .number = Translate(k, replay.chunk()),
                                .pass = replay.pass(),
                                .skip = skip});
    }
  }
  result.gone.assign(gone.begin(), gone.end());
  result.changed.assign(changed.begin(), changed.end());
  return result;
}

}  // namespace sluice::lc0
