// ShuffleBuffer: shuffles a stream of examples through a reservoir, for any
// workload. Input and output "output": Example.
//
//   stage {
//     name: "shuffle"  input: "spectrogram"
//     shuffle_buffer { size: 10000 min_fill: 1000 }
//   }
//
// Promises (those of lc0's shuffling_frame_sampler, whose core it shares:
// stages/generic/reservoir_shuffler.h):
// - Nothing is emitted until `min_fill` examples are in (unset: `size`);
//   while the input is open the reservoir never drains below `min_fill`
//   (0: an example may pass straight through).
// - Once the reservoir holds `size` examples, each incoming example takes
//   the slot of a uniformly chosen resident, which is emitted (waiting for
//   room downstream). Between min_fill and size, residents are emitted
//   while the output has room; when it is full the reservoir grows instead.
//   With min_fill == size the output is a pure function of the input order
//   and the seed.
// - When the input ends, every resident is emitted in random order, then
//   the output closes: a finite stream loses and duplicates nothing.
// - Its generator is seeded from the pipeline seed and the stage name.
// - One coroutine, yielding every few thousand examples; Stop() ends it at
//   its next channel wait.
// - Checkpoints (deterministic mode; engine/checkpoint.h): it saves the
//   examples it emitted that no batch handed out holds yet and its
//   reservoir, slot by slot, as their sources' references
//   (Example::origin), with its generator and where its input resumes (the
//   cursor of the last example taken in). Positions downstream are
//   examples emitted in this run. A resumed buffer takes the restored
//   examples (origin().restored) up to the first of the stream; references
//   that could not be read again are counted (checkpoint_example_missing).
// - Metrics: capacity, fill (residents now), examples received and emitted.
#ifndef SLUICE_STAGES_GENERIC_SHUFFLE_BUFFER_H_
#define SLUICE_STAGES_GENERIC_SHUFFLE_BUFFER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/generic/example.h"
#include "stages/generic/reservoir_shuffler.h"

namespace sluice {

class ShuffleBuffer final : public Stage {
 public:
  // Errors: size 0, min_fill above size, an input that is not one channel
  // of Example.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  void PrepareCheckpoints() override;
  void Acknowledge(uint64_t consumed) override;
  absl::StatusOr<std::optional<ResumeRequest>> SaveCheckpoint(
      const ResumeRequest& downstream, std::string* state) override;
  absl::Status RestoreCheckpoint(const std::string& state) override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  ShuffleBuffer(const StageContext& context, uint64_t size, uint64_t min_fill,
                Channel<Example>* input);

  asio::awaitable<void> Run();
  // A resumed buffer: takes the restored examples and restores the
  // shuffler; false when the input ended or the stage stopped first.
  asio::awaitable<bool> TakeRestoredExamples();

  Channel<Example>* const input_;
  Channel<Example>* const output_;
  ReservoirShuffler<Example> shuffler_;
  std::optional<ShuffleBufferCheckpoint> resume_from_;
  // False while a resumed buffer is still taking its restored examples.
  std::atomic<bool> restored_{true};
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_SHUFFLE_BUFFER_H_
