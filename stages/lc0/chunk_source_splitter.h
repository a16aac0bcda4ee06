// ChunkSourceSplitter: divides the chunks of every source between several
// outputs (train / validation, or one shard per rank) by a stable hash.
// Input: one channel of lc0::ChunkSourceItem; one output of
// lc0::ChunkSourceItem per non-discarded `split`, named after it.
//
// It splits *sources*, before the pool: every source is forwarded to every
// output as a filtered view (ChunkSource::WithFilter) that keeps only the
// chunks assigned to that output, so each output feeds its own pool with
// its own window and shuffle. Chunk (source name, index in source) goes to
// split k when u = Unit(hash(ChunkId(name, index), salt)) falls in the k-th
// slice of [0, 1) cut in proportion to the weights. The assignment depends
// on nothing else (not the seed, the thread count, the order of arrival or
// the machine), so it is stable across runs; chunks of one tar are spread
// over the splits. Discarded splits take their share but have no output
// (a rank keeps its shard and discards the others'). The filter runs when
// the pool indexes the view: each output's pool reads the tar headers once.
// The end-of-scan marker goes to every output.
#ifndef SLUICE_STAGES_LC0_CHUNK_SOURCE_SPLITTER_H_
#define SLUICE_STAGES_LC0_CHUNK_SOURCE_SPLITTER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "stages/lc0/chunk.h"

namespace sluice::lc0 {

// The split (index into `weights`) that chunk (source_name, index_in_source)
// belongs to; `weights` positive. Exposed for tests and tools.
size_t AssignSplit(std::string_view source_name, uint64_t index_in_source,
                   uint64_t salt, const std::vector<double>& weights);

class ChunkSourceSplitter final : public Stage {
 public:
  // Validates the splits (names unique and non-empty, weights positive and
  // finite, at least one kept) and needs one input of ChunkSourceItem.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  ChunkSourceSplitter(const StageContext& context,
                      const ChunkSourceSplitterConfig& config,
                      Channel<ChunkSourceItem>* input);
  asio::awaitable<void> Run();

  const ChunkSourceSplitterConfig config_;
  std::vector<double> weights_;
  Channel<ChunkSourceItem>* const input_;
  // Per split: its output, or nullptr when discarded.
  std::vector<Channel<ChunkSourceItem>*> outputs_;
  std::atomic<uint64_t> sources_{0};
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_CHUNK_SOURCE_SPLITTER_H_
