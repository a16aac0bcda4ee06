#include "stages/lc0/internal/chunk_window.h"

#include <algorithm>
#include <utility>

namespace sluice::lc0 {

ChunkWindow::ChunkWindow(uint64_t capacity, bool single_pass, uint64_t seed)
    : capacity_(capacity), single_pass_(single_pass), random_(seed) {}

void ChunkWindow::Add(std::shared_ptr<const ChunkSource> source) {
  const uint64_t size = source->size();
  if (size == 0) return;
  if (source->name() > anchor_) chunks_since_anchor_ += size;
  for (uint64_t i = 0; i < size; ++i) pending_.push_back(end_ + i);
  sources_.push_back({std::move(source), end_});
  end_ += size;
  if (single_pass_ || end_ - low_ <= capacity_) return;
  dropped_ += end_ - capacity_ - low_;
  low_ = end_ - capacity_;
  while (sources_.front().base + sources_.front().source->size() <= low_) {
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
    return Draw{it->source, static_cast<size_t>(number - it->base), pass_};
  }
}

void ChunkWindow::ResetAnchor() {
  if (!sources_.empty()) {
    const std::string* newest = &sources_.front().source->name();
    for (const Entry& entry : sources_) {
      newest = &std::max(*newest, entry.source->name());
    }
    anchor_ = *newest;
  }
  chunks_since_anchor_ = 0;
}

void ChunkWindow::SetAnchor(std::string key) {
  anchor_ = std::move(key);
  chunks_since_anchor_ = 0;
  for (const Entry& entry : sources_) {
    if (entry.source->name() > anchor_) {
      chunks_since_anchor_ += entry.source->size();
    }
  }
}

}  // namespace sluice::lc0
