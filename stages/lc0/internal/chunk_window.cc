#include "stages/lc0/internal/chunk_window.h"

#include <algorithm>
#include <utility>

namespace sluice::lc0 {

ChunkWindow::ChunkWindow(uint64_t capacity, bool single_pass, uint64_t seed)
    : capacity_(capacity), single_pass_(single_pass), random_(seed) {}

void ChunkWindow::Add(std::shared_ptr<const ChunkSource> source) {
  Add(std::move(source), View{});
}

void ChunkWindow::Add(std::shared_ptr<const ChunkSource> source, View view) {
  const uint64_t size = source->size();
  if (size == 0) return;
  if (source->name() > anchor_) chunks_since_anchor_ += size;
  for (uint64_t i = 0; i < size; ++i) pending_.push_back(end_ + i);
  history_.push_back({.name = source->name(),
                      .base = end_,
                      .size = size,
                      .file_size = source->file_size(),
                      .view = view});
  std::string name = source->name();
  sources_.push_back({std::move(source), std::move(name), end_, size});
  end_ += size;
  if (single_pass_ || end_ - low_ <= capacity_) return;
  dropped_ += end_ - capacity_ - low_;
  low_ = end_ - capacity_;
  while (sources_.front().base + sources_.front().size <= low_) {
    sources_.pop_front();
  }
  MaybeCompact();
}

void ChunkWindow::MaybeCompact() {
  if (pending_.size() < 1024 || pending_.size() < 2 * (end_ - low_)) return;
  std::erase_if(pending_, [this](uint64_t number) { return number < low_; });
}

std::optional<ChunkWindow::Draw> ChunkWindow::Next() {
  while (true) {
    if (pending_.empty()) {
      if (single_pass_ || end_ == low_) return std::nullopt;
      ++pass_;
      for (uint64_t number = low_; number < end_; ++number) {
        pending_.push_back(number);
      }
    }
    const size_t pick = random_.Below(pending_.size());
    const uint64_t number = pending_[pick];
    pending_[pick] = pending_.back();
    pending_.pop_back();
    if (number < low_) continue;  // evicted since it joined the pass
    auto it = std::upper_bound(
        sources_.begin(), sources_.end(), number,
        [](uint64_t value, const Entry& entry) { return value < entry.base; });
    --it;
    return Draw{it->source, static_cast<size_t>(number - it->base), pass_,
                number};
  }
}

void ChunkWindow::Save(ChunkPoolCheckpoint* out) const {
  for (const Entry& entry : sources_) {
    const SourceRecord* record = RecordOf(entry.base);
    ChunkPoolCheckpoint::Source& source = *out->add_source();
    source.set_name(entry.name);
    source.set_base(entry.base);
    source.set_size(entry.size);
    source.set_file_size(record != nullptr ? record->file_size : 0);
    source.set_in_window(true);
    if (record != nullptr && record->view.world_size > 1) {
      source.set_view_rank(record->view.rank);
      source.set_view_world_size(record->view.world_size);
    }
  }
  out->set_low(low_);
  out->set_end(end_);
  out->set_pass(pass_);
  out->set_dropped(dropped_);
  out->set_random_state(random_.state());
  out->mutable_pending()->Add(pending_.begin(), pending_.end());
  out->set_anchor(anchor_);
  out->set_chunks_since_anchor(chunks_since_anchor_);
}

void ChunkWindow::Restore(
    const ChunkPoolCheckpoint& in,
    const std::function<std::shared_ptr<const ChunkSource>(
        const ChunkPoolCheckpoint::Source&)>& find) {
  sources_.clear();
  history_.clear();
  for (const ChunkPoolCheckpoint::Source& source : in.source()) {
    history_.push_back({.name = source.name(),
                        .base = source.base(),
                        .size = source.size(),
                        .file_size = source.file_size(),
                        .view = {.rank = source.view_rank(),
                                 .world_size = source.view_world_size()}});
    if (source.in_window()) {
      sources_.push_back(
          {find(source), source.name(), source.base(), source.size()});
    }
  }
  std::sort(history_.begin(), history_.end(),
            [](const SourceRecord& a, const SourceRecord& b) {
              return a.base < b.base;
            });
  std::sort(sources_.begin(), sources_.end(),
            [](const Entry& a, const Entry& b) { return a.base < b.base; });
  low_ = in.low();
  end_ = in.end();
  pass_ = in.pass();
  dropped_ = in.dropped();
  random_ = StableRandom(in.random_state());
  pending_.assign(in.pending().begin(), in.pending().end());
  anchor_ = in.anchor();
  chunks_since_anchor_ = in.chunks_since_anchor();
}

const ChunkWindow::SourceRecord* ChunkWindow::RecordOf(uint64_t number) const {
  auto it = std::upper_bound(history_.begin(), history_.end(), number,
                             [](uint64_t value, const SourceRecord& record) {
                               return value < record.base;
                             });
  if (it == history_.begin()) return nullptr;
  --it;
  return number < it->base + it->size ? &*it : nullptr;
}

void ChunkWindow::ResetAnchor() {
  if (!sources_.empty()) {
    const std::string* newest = &sources_.front().name;
    for (const Entry& entry : sources_) {
      newest = &std::max(*newest, entry.name);
    }
    anchor_ = *newest;
  }
  chunks_since_anchor_ = 0;
}

void ChunkWindow::SetAnchor(std::string key) {
  anchor_ = std::move(key);
  chunks_since_anchor_ = 0;
  for (const Entry& entry : sources_) {
    if (entry.name > anchor_) chunks_since_anchor_ += entry.size;
  }
}

}  // namespace sluice::lc0
