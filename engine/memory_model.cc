#include "engine/memory_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/channel_base.h"

namespace sluice {

std::string MemoryTerm::SettingName(std::string_view stage_type) const {
  switch (knob) {
    case MemoryKnob::kFixed:
      return "";
    case MemoryKnob::kCapacity:
      return absl::StrCat("output '", output, "' capacity");
    default:
      return absl::StrCat(std::string(stage_type), ".", field);
  }
}

std::string_view MemoryModel::StageType(std::string_view stage) const {
  auto it = stage_types_.find(std::string(stage));
  return it == stage_types_.end() ? std::string_view() : it->second;
}

uint64_t MemoryModel::Bytes() const {
  uint64_t total = base_bytes_;
  for (const MemoryTerm& term : terms_) total += term.Bytes();
  return total;
}

uint64_t MemoryModel::MinimumBytes() const {
  uint64_t total = base_bytes_;
  for (const MemoryTerm& term : terms_) total += term.MinimumBytes();
  return total;
}

uint64_t EngineBaseBytes(unsigned threads) {
  // Measured (docs/tuning.md): a pipeline adds about 8 MiB to a process
  // whatever its stages, plus about 2 MiB per worker thread (its stack's
  // touched pages, its malloc arena, per-thread caches).
  constexpr uint64_t kFixed = uint64_t{8} << 20;
  constexpr uint64_t kPerThread = uint64_t{2} << 20;
  return kFixed + kPerThread * std::max(threads, 1u);
}

void MemoryModelBuilder::BeginStage(std::string name, std::string type,
                                    std::vector<const ChannelBase*> inputs) {
  stage_types_[name] = std::move(type);
  stage_ = std::move(name);
  inputs_ = std::move(inputs);
}

uint64_t MemoryModelBuilder::InputItemBytes(size_t index) const {
  if (index >= inputs_.size()) return kUnknownItemBytes;
  auto it = item_bytes_.find(inputs_[index]);
  return it == item_bytes_.end() ? kUnknownItemBytes : it->second;
}

void MemoryModelBuilder::AddOutput(const ChannelBase* channel,
                                   const std::string& name,
                                   uint64_t item_bytes) {
  item_bytes_[channel] = item_bytes;
  Add({.part = absl::StrCat("output '", name, "'"),
       .what = "items queued in the output",
       .knob = MemoryKnob::kCapacity,
       .field = "capacity",
       .output = name,
       .count = channel->capacity(),
       .min_count = 1,
       .bytes_each = item_bytes});
}

void MemoryModelBuilder::Add(MemoryTerm term) {
  term.stage = stage_;
  if (term.knob == MemoryKnob::kFixed) term.min_count = term.count;
  term.min_count = std::min(term.min_count, term.count);
  terms_.push_back(std::move(term));
}

MemoryModel MemoryModelBuilder::Build() && {
  return MemoryModel(EngineBaseBytes(threads_), threads_, std::move(terms_),
                     std::move(stage_types_));
}

std::string FormatBytes(uint64_t bytes) {
  const double value = static_cast<double>(bytes);
  if (bytes >= (uint64_t{1} << 30)) {
    return absl::StrFormat("%.2f GiB", value / (1 << 30));
  }
  if (bytes >= (uint64_t{1} << 20)) {
    return absl::StrFormat("%.1f MiB", value / (1 << 20));
  }
  if (bytes >= (uint64_t{1} << 10)) {
    return absl::StrFormat("%.1f KiB", value / (1 << 10));
  }
  return absl::StrCat(bytes, " B");
}

}  // namespace sluice
