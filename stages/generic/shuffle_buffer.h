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
// - Checkpoints (stages/generic/reservoir_stage.h): the examples it
//   emitted that no batch handed out holds yet and its reservoir, as their
//   sources' references (Example::origin). A resumed buffer takes the
//   restored examples (origin().restored) up to the first of the stream;
//   references that could not be read again are counted
//   (checkpoint_example_missing).
// - Metrics: capacity, fill (residents now), examples received and emitted.
#ifndef SLUICE_STAGES_GENERIC_SHUFFLE_BUFFER_H_
#define SLUICE_STAGES_GENERIC_SHUFFLE_BUFFER_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "stages/generic/example.h"
#include "stages/generic/reservoir_stage.h"

namespace sluice {

class ShuffleBuffer final : public ReservoirStage<Example> {
 public:
  // Errors: size 0, min_fill above size, an input that is not one channel
  // of Example.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  ShuffleBuffer(const StageContext& context, uint64_t size, uint64_t min_fill,
                Channel<Example>* input);
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_SHUFFLE_BUFFER_H_
