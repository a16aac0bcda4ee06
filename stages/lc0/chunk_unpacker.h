// ChunkUnpacker: turns chunks (gzip of one game's records) into frames.
// Input: lc0::Chunk; output "output": lc0::Frame.
//
//   stage {
//     name: "unpacker"  input: "pool"
//     chunk_unpacker { parallelism: 2 input_format: 3
//                      position_sampling_rate: 0.03125 }
//   }
//
// Per chunk, as one slice of CPU work (then it yields to the executor):
// 1. gunzip (io/gzip.h) within `max_decompressed_bytes`, unless a rescorer
//    already did (Chunk::decompressed); failures skip the chunk as
//    `not_gzip`, `corrupt_gzip` or `decompressed_too_large`;
// 2. the chunk-level checks of record_validator.h (the first record gives
//    the version): `empty_chunk`, `unknown_version`, `size_not_multiple`
//    skip the chunk;
// 3. sampling: `position_count` positions chosen uniformly (0: all), each
//    kept with probability `position_sampling_rate`;
// 4. each kept record is up-converted to V6 (a V6 or V7 record is read
//    where it lies in the gunzipped chunk; a V7 record's extra fields go
//    into its frame) and checked (CheckRecord for `input_format`): a bad
//    record is dropped and counted by its reason;
// 5. diff focus (FORMAT.md) on the valid ones; survivors go out in chunk
//    order, tagged with the chunk's identity.
// Every decision of 3 and 5 is a function of (pipeline seed, chunk id,
// pool pass, position index), independent of scheduling and of which
// unpacker instance handles the chunk: a rerun keeps the same positions,
// a later pass over the same chunk draws afresh. Rejections count only
// the positions examined (after step 3).
//
// Nothing aborts on bad data. `parallelism` coroutines unpack at once;
// frames of different chunks interleave in whatever order they finish,
// except in deterministic mode, where they keep the chunks' order
// (engine/ordered_output.h). Stop() ends them at their next channel wait.
// With autotune the tuner may admit more of them while it runs
// (engine/parallelism_gate.h).
#ifndef SLUICE_STAGES_LC0_CHUNK_UNPACKER_H_
#define SLUICE_STAGES_LC0_CHUNK_UNPACKER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/stateless_stage.h"
#include "stages/lc0/chunk.h"
#include "stages/lc0/format/position_sampling.h"
#include "stages/lc0/frame.h"

namespace sluice::lc0 {

// Checkpoints pass through (StatelessStage) in the pool's unit
// (Chunk::position, Frame::chunk_position).
class ChunkUnpacker final : public StatelessStage {
 public:
  // Errors name the field: parallelism 0, max_decompressed_bytes 0, an
  // unsupported input_format, a rate outside (0, 1], bad diff focus
  // parameters, an input that is not one channel of Chunk.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  // Memory (engine/memory_model.h): a chunk compressed and decompressed per
  // worker (parallelism) and the queued frames (stages/lc0/memory_estimates.h).
  void DescribeMemory(MemoryModelBuilder& builder) const override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  ChunkUnpacker(const StageContext& context, const ChunkUnpackerConfig& config,
                DiffFocus diff_focus, Channel<Chunk>* input);
  asio::awaitable<void> Work(int index);
  // Appends the frames kept from `chunk` to `frames`, decompressing into
  // `raw` (reused across chunks) and checking each record in `scratch`;
  // counts what it drops.
  void Unpack(const Chunk& chunk, std::string* raw, V6TrainingRecord* scratch,
              std::vector<Frame>* frames);

  const ChunkUnpackerConfig config_;
  const DiffFocus diff_focus_;
  // Independent random streams derived from the pipeline seed.
  const uint64_t count_seed_;
  const uint64_t rate_seed_;
  const uint64_t diff_focus_seed_;
  Channel<Chunk>* const input_;
  Channel<Frame>* const output_;
  // Deterministic mode: frames go out in chunk order; else nullptr.
  OrderedOutput<Frame>* const ordered_;
  ParallelismGate* const gate_;
  std::atomic<uint64_t> chunks_received_{0};
  std::atomic<uint64_t> chunks_unpacked_{0};
  std::atomic<uint64_t> decompressed_bytes_{0};
  std::atomic<uint64_t> records_{0};
  std::atomic<uint64_t> sampled_out_{0};
  std::atomic<uint64_t> frames_emitted_{0};
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_CHUNK_UNPACKER_H_
