#include "stages/lc0/chunk_source_splitter.h"

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/stable_hash.h"
#include "engine/status_macros.h"

namespace sluice::lc0 {

size_t AssignSplit(std::string_view source_name, uint64_t index_in_source,
                   uint64_t salt, const std::vector<double>& weights) {
  double total = 0;
  for (double weight : weights) total += weight;
  const uint64_t hash =
      HashCombine(ChunkId(source_name, index_in_source), salt);
  const double point = static_cast<double>(hash >> 11) * 0x1.0p-53 * total;
  double end = 0;
  for (size_t k = 0; k + 1 < weights.size(); ++k) {
    end += weights[k];
    if (point < end) return k;
  }
  return weights.size() - 1;
}

absl::StatusOr<std::unique_ptr<Stage>> ChunkSourceSplitter::Create(
    const StageContext& context) {
  const ChunkSourceSplitterConfig& config =
      context.config().chunk_source_splitter();
  std::set<std::string> names;
  bool kept = false;
  for (const ChunkSourceSplitterConfig::Split& split : config.split()) {
    if (split.name().empty()) {
      return context.FieldError("split.name", "must not be empty");
    }
    if (!names.insert(split.name()).second) {
      return context.FieldError(
          "split.name", absl::StrCat("'", split.name(), "' is used twice"));
    }
    if (!std::isfinite(split.weight()) || split.weight() <= 0) {
      return context.FieldError(
          "split.weight",
          absl::StrCat("of '", split.name(), "' must be positive and finite"));
    }
    kept = kept || !split.discard();
  }
  if (!kept) {
    return context.FieldError("split",
                              "needs at least one split not discarded");
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<ChunkSourceItem> * input,
                          context.SingleInput<ChunkSourceItem>());
  return std::unique_ptr<Stage>(
      new ChunkSourceSplitter(context, config, input));
}

ChunkSourceSplitter::ChunkSourceSplitter(
    const StageContext& context, const ChunkSourceSplitterConfig& config,
    Channel<ChunkSourceItem>* input)
    : Stage(context), config_(config), input_(input) {
  for (const ChunkSourceSplitterConfig::Split& split : config.split()) {
    weights_.push_back(split.weight());
    outputs_.push_back(split.discard()
                           ? nullptr
                           : AddOutput<ChunkSourceItem>(split.name(), 1024));
  }
}

void ChunkSourceSplitter::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, 1, [this](int) { return Run(); });
}

asio::awaitable<void> ChunkSourceSplitter::Run() {
  while (std::optional<ChunkSourceItem> item =
             co_await input_->Receive(load_meter())) {
    if (item->source != nullptr) sources_.fetch_add(1);
    for (size_t k = 0; k < outputs_.size(); ++k) {
      if (outputs_[k] == nullptr) continue;
      ChunkSourceItem view{nullptr, item->phase};
      if (item->source != nullptr) {
        view.source = item->source->WithFilter(
            [k, salt = config_.salt(), weights = weights_](
                std::string_view name, uint64_t index) {
              return AssignSplit(name, index, salt, weights) == k;
            });
      }
      if (!co_await outputs_[k]->Send(std::move(view), load_meter())) {
        co_return;
      }
    }
  }
}

void ChunkSourceSplitter::AddMetrics(StageMetricProto& metrics) {
  metrics.mutable_chunk_source_splitter()->set_sources(sources_.exchange(0));
}

}  // namespace sluice::lc0
