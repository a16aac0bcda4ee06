// ChunkRescorer: rescores each game as Leela Chess Zero's rescorer does
// (stages/lc0/rescorer/SPEC.md), between the chunk pool and the unpacker.
// Input: lc0::Chunk (gzip); output "output": lc0::Chunk holding the
// rescored records decompressed (Chunk::decompressed), which the unpacker
// reads without a second gunzip.
//
//   stage {
//     name: "rescorer"  input: "pool"
//     chunk_rescorer { syzygy_paths: "/syzygy/345"
//                      deblunder { threshold: 0.1 width: 0.03 }
//                      parallelism: 2 }
//   }
//   stage { name: "unpacker" input: "rescorer" chunk_unpacker { ... } }
//
// Per chunk, as one slice of CPU work: gunzip (within
// max_decompressed_bytes; failures skip the chunk as not_gzip,
// corrupt_gzip or decompressed_too_large), then rescorer::GameRescorer:
// checks, replay, tablebase results, policy, plies_left, deblunder, format
// conversion, V6 or V7 output. A game lc0 refuses is dropped and counted by
// the reason naming lc0's check (range_violation, probability_sum_error,
// played_move_not_listed, played_move_marked_illegal, played_move_illegal,
// ...), never passed on unrescored.
//
// The tables are loaded when the stage is built (an unreadable path or a
// damaged table file fails the build, naming it) and shared by every
// coroutine and every rescorer stage of the process. Each chunk is
// rescored on its own: the stage keeps nothing between chunks, so
// checkpoints pass through it, and in deterministic mode its output keeps
// the input's order (engine/ordered_output.h).
#ifndef SLUICE_STAGES_LC0_CHUNK_RESCORER_H_
#define SLUICE_STAGES_LC0_CHUNK_RESCORER_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/stateless_stage.h"
#include "stages/lc0/chunk.h"
#include "stages/lc0/rescorer/game_rescorer.h"

namespace sluice::lc0 {

class ChunkRescorer final : public StatelessStage {
 public:
  // Errors name the field: no syzygy_paths, a path or table that cannot be
  // loaded, an option out of its range, parallelism or
  // max_decompressed_bytes 0, an input that is not one channel of Chunk.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  // Memory (engine/memory_model.h): a chunk compressed and twice decompressed
  // per worker (parallelism) and the queued decompressed chunks
  // (stages/lc0/memory_estimates.h).
  void DescribeMemory(MemoryModelBuilder& builder) const override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  ChunkRescorer(const StageContext& context, const ChunkRescorerConfig& config,
                rescorer::GameRescorer rescorer, Channel<Chunk>* input);
  asio::awaitable<void> Work();
  // Appends the rescored `chunk` to `out`, or counts why it is dropped.
  void Rescore(const Chunk& chunk, std::vector<Chunk>& out);

  const ChunkRescorerConfig config_;
  const rescorer::GameRescorer rescorer_;
  Channel<Chunk>* const input_;
  Channel<Chunk>* const output_;
  // Deterministic mode: chunks go out in input order; else nullptr.
  OrderedOutput<Chunk>* const ordered_;
  std::atomic<uint64_t> games_{0};
  std::atomic<uint64_t> positions_{0};
  std::atomic<uint64_t> positions_probed_{0};
  std::atomic<uint64_t> results_changed_{0};
  std::atomic<uint64_t> dtz_decisions_{0};
  std::atomic<uint64_t> blunders_{0};
  std::atomic<uint64_t> boosted_entries_{0};
  std::atomic<uint64_t> records_dropped_{0};
};

// The rescorer options of `config`, or an InvalidArgument naming the field
// out of range (lc0's ranges).
absl::StatusOr<rescorer::RescoreOptions> RescoreOptionsOf(
    const ChunkRescorerConfig& config);

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_CHUNK_RESCORER_H_
