// ShufflingFrameSampler: shuffles a stream of frames through a reservoir.
// Input and output "output": lc0::Frame.
//
//   stage {
//     name: "sampler"  input: "unpacker"
//     shuffling_frame_sampler { reservoir_size: 1000000 min_fill: 100000 }
//   }
//
// Promises:
// - Nothing is emitted until `min_fill` frames are in; while the input is
//   open the reservoir never drains below `min_fill` (0: a frame may pass
//   straight through).
// - Once the reservoir holds `reservoir_size` frames, each incoming frame
//   takes the slot of a uniformly chosen resident, which is emitted
//   (waiting for room downstream).
// - Between the two, after each incoming frame the sampler emits uniformly
//   chosen residents while the output has room and the reservoir is above
//   `min_fill`; when the output is full it keeps the frame instead, so the
//   reservoir grows towards `reservoir_size` while downstream is the
//   bottleneck. With min_fill == reservoir_size (the default) the output is
//   a pure function of the input order and the seed.
// - When the input ends, every resident is emitted in random order, then
//   the output closes: a finite stream loses nothing and duplicates nothing.
// - Each instance owns its generator, seeded from the pipeline seed and the
//   stage name, so parallel samplers are independent and reproducible.
// - One coroutine; it yields to the executor every few thousand frames.
//   Stop() ends it at its next channel wait.
// - Checkpoints (stages/generic/reservoir_stage.h): the reservoir and the
//   frames emitted but not yet in a batch handed out are saved as
//   references (chunk number, record index; ResumeRequest.restore asks the
//   pool to read them again). Positions upstream are the pool's chunk
//   positions (Frame::chunk_position). A resumed sampler first takes those
//   frames (restored frames up to the end-of-restore frame), then emits
//   the pending ones, then goes on; frames whose source is gone are
//   counted (`checkpoint_frame_missing`) and left out.
// The reservoir stage is the generic one (stages/generic/reservoir_stage.h),
// shared with the shuffle_buffer stage of Examples.
#ifndef SLUICE_STAGES_LC0_SHUFFLING_FRAME_SAMPLER_H_
#define SLUICE_STAGES_LC0_SHUFFLING_FRAME_SAMPLER_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "stages/generic/reservoir_stage.h"
#include "stages/lc0/frame.h"

namespace sluice::lc0 {

class ShufflingFrameSampler final : public ReservoirStage<Frame> {
 public:
  // Errors: reservoir_size 0, min_fill above reservoir_size, an input that
  // is not one channel of Frame.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  ShufflingFrameSampler(const StageContext& context, uint64_t reservoir_size,
                        uint64_t min_fill, Channel<Frame>* input);
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_SHUFFLING_FRAME_SAMPLER_H_
