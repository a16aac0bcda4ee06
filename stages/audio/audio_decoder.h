// AudioDecoder: decodes each example's encoded clip (WAV, FLAC, Ogg Vorbis
// or Opus, MP3) into a mono float32 waveform at one sample rate. Input and
// output "output": Example.
//
//   stage { name: "decoder" input: "clips"
//           audio_decoder { sample_rate: 16000 parallelism: 2 } }
//   // in:  audio uint8 [n], label, index, seed
//   // out: waveform float32 [samples], label, index, seed
//
// Promises:
// - `input_field` (uint8 [n], e.g. arrow_source's view of an Arrow binary
//   cell) is decoded from memory (stages/audio/codec/audio_decoding.h),
//   channels mixed to their mean, resampled with libsoxr at
//   `resample_quality` when the clip's rate is not `sample_rate`
//   (stages/audio/codec/resampler.h), and written to `output_field`; the
//   input field is removed (its record batch can be recycled), every other
//   field goes on untouched.
// - A clip that cannot be decoded is skipped and counted by its reason
//   (not_audio, empty_clip, malformed, unsupported_encoding,
//   too_many_channels, too_long, length_mismatch, truncated), an example
//   without the input field (missing_field) or with another type
//   (wrong_dtype) likewise; each logged at a limited rate naming the stage,
//   the example's index and the reason. Nothing else is lost.
// - `parallelism` coroutines decode at once, each with its own decoder
//   buffers and resampler; the output order across coroutines follows
//   their finishing order. One clip is one slice of CPU work. With
//   autotune the tuner may admit more of them while it runs
//   (engine/parallelism_gate.h).
// - Config errors (sample_rate 0, an unknown quality, parallelism 0,
//   max_channels 0, max_seconds < 0, empty field names) fail at build time
//   naming the field.
#ifndef SLUICE_STAGES_AUDIO_AUDIO_DECODER_H_
#define SLUICE_STAGES_AUDIO_AUDIO_DECODER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/stateless_stage.h"
#include "stages/audio/codec/audio_decoding.h"
#include "stages/audio/codec/resampler.h"
#include "stages/generic/example.h"

namespace sluice::audio {

class AudioDecoder final : public StatelessStage {
 public:
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  // Memory (engine/memory_model.h): a clip encoded and decoded per worker
  // (parallelism) and the queued waveforms, estimated from the input's
  // encoded size (stages/audio/memory_estimates.h).
  void DescribeMemory(MemoryModelBuilder& builder) const override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  AudioDecoder(const StageContext& context, const AudioDecoderConfig& config,
               ResampleQuality quality, Channel<Example>* input);
  asio::awaitable<void> Work(int index);
  // Decodes `example`'s clip in place; false (counted, logged) when it is
  // to be skipped.
  bool Decode(Example& example, DecodedAudio& decoded, Resampler& resampler,
              std::vector<float>& resampled);
  void Skip(std::string_view reason, const Example& example,
            std::string_view message);

  const AudioDecoderConfig config_;
  const ResampleQuality quality_;
  const DecodeLimits limits_;
  Channel<Example>* const input_;
  Channel<Example>* const output_;
  // Deterministic mode: results keep the input order; else nullptr.
  OrderedOutput<Example>* const ordered_;
  ParallelismGate* const gate_;
  std::atomic<uint64_t> clips_decoded_{0};
  std::atomic<uint64_t> clips_resampled_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> output_samples_{0};
};

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_AUDIO_DECODER_H_
