// CropOrPadStage: cuts each example's waveform to a fixed number of
// samples, by seed 004's rules (stages/audio/dsp/crop_or_pad.h). Input and
// output "output": Example.
//
//   stage { name: "crop" input: "decoder"
//           crop_or_pad { samples: 16000 mode: TRAIN } }
//
// Promises:
// - TRAIN: a random window of a longer waveform, its start
//   splitmix64(seed ^ index * 0xD6E8FEB86659FD93) % (length - samples + 1)
//   from the example's int64 `seed` and `index` fields (arrow_source sets
//   them: the same row in the same pass gets the same window, the next pass
//   another); a shorter waveform is zero-padded at the end.
// - EVAL: the centre window; a shorter waveform gets (samples - length) / 2
//   zeros on the left and the rest on the right. No seed or index needed.
// - `field` (float32 [n]) is replaced by float32 [samples]; other fields go
//   on untouched. An example without the field, or (TRAIN) without `seed`
//   and `index`, is skipped as missing_field; one of another type as
//   wrong_dtype; logged at a limited rate.
// - One coroutine (a crop is a copy); metrics count cropped, padded and
//   unchanged waveforms.
// - Config errors (samples 0, an empty field name) fail at build time.
#ifndef SLUICE_STAGES_AUDIO_CROP_OR_PAD_STAGE_H_
#define SLUICE_STAGES_AUDIO_CROP_OR_PAD_STAGE_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/stateless_stage.h"
#include "stages/audio/dsp/crop_or_pad.h"
#include "stages/generic/example.h"

namespace sluice::audio {

class CropOrPadStage final : public StatelessStage {
 public:
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  // Memory (engine/memory_model.h): the queued examples of `samples` floats.
  void DescribeMemory(MemoryModelBuilder& builder) const override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  CropOrPadStage(const StageContext& context, const CropOrPadConfig& config,
                 Channel<Example>* input);
  asio::awaitable<void> Work();
  // Crops `example`'s waveform in place; false (counted, logged) when it
  // is to be skipped.
  bool Crop(Example& example);

  const CropOrPadConfig config_;
  const CropMode mode_;
  Channel<Example>* const input_;
  Channel<Example>* const output_;
  std::atomic<uint64_t> cropped_{0};
  std::atomic<uint64_t> padded_{0};
  std::atomic<uint64_t> unchanged_{0};
};

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_CROP_OR_PAD_STAGE_H_
