// SpectrogramStage: the (mel) spectrogram of each example's waveform, with
// torchaudio's Spectrogram / MelSpectrogram meanings and defaults, and an
// optional log (stages/audio/dsp/spectrogram.h). Input and output "output":
// Example.
//
//   stage { name: "spectrogram" input: "crop"
//           spectrogram { n_fft: 400 hop_length: 160 n_mels: 64 log: LOG } }
//   // in:  waveform float32 [16000], label, index, seed
//   // out: spectrogram float32 [64, 101], label, index, seed
//
// Promises:
// - `input_field` (float32 [samples]) is replaced by `output_field`,
//   float32 [rows, frames] row-major: rows = n_mels, or n_fft / 2 + 1
//   without a filterbank; frames = 1 + samples / hop_length with center
//   (even n_fft). Other fields go on untouched.
// - `parallelism` coroutines compute at once, each with its own FFT plan,
//   window and filterbank, made once when it starts; a spectrogram
//   allocates only its output. With autotune the tuner may admit more of
//   them while it runs (engine/parallelism_gate.h).
// - An example without the field is skipped as missing_field, one of
//   another type as wrong_dtype, a waveform too short for the window
//   (center: at most n_fft / 2 samples; else fewer than n_fft) as
//   too_short; logged at a limited rate.
// - Config errors (n_fft < 2, win_length > n_fft, power not 1 or 2, f_max
//   above sample_rate / 2, an unknown mel_scale or mel_norm, top_db
//   without DB, parallelism 0, ...) fail at build time naming the field.
#ifndef SLUICE_STAGES_AUDIO_SPECTROGRAM_STAGE_H_
#define SLUICE_STAGES_AUDIO_SPECTROGRAM_STAGE_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/stateless_stage.h"
#include "stages/audio/dsp/spectrogram.h"
#include "stages/generic/example.h"

namespace sluice::audio {

class SpectrogramStage final : public StatelessStage {
 public:
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  // Memory (engine/memory_model.h): a waveform and its spectrogram per worker
  // (parallelism) and the queued spectrograms.
  void DescribeMemory(MemoryModelBuilder& builder) const override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  SpectrogramStage(const StageContext& context, const SpectrogramConfig& config,
                   const ::sluice::SpectrogramConfig& proto,
                   Channel<Example>* input);
  asio::awaitable<void> Work(int index);
  // Replaces `example`'s waveform by its spectrogram; false (counted,
  // logged) when it is to be skipped.
  bool Transform(Example& example, Spectrogram& spectrogram);

  const SpectrogramConfig config_;
  const std::string input_field_;
  const std::string output_field_;
  const uint32_t parallelism_;
  Channel<Example>* const input_;
  Channel<Example>* const output_;
  // Deterministic mode: results keep the input order; else nullptr.
  OrderedOutput<Example>* const ordered_;
  ParallelismGate* const gate_;
  std::atomic<uint64_t> spectrograms_{0};
};

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_SPECTROGRAM_STAGE_H_
