#include "stages/audio/audio_decoder.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "engine/map_worker.h"
#include "engine/status_macros.h"
#include "stages/audio/codec/audio_skip_reason.h"
#include "stages/audio/internal/example_values.h"
#include "stages/audio/memory_estimates.h"

namespace sluice::audio {

absl::StatusOr<std::unique_ptr<Stage>> AudioDecoder::Create(
    const StageContext& context) {
  const AudioDecoderConfig& config = context.config().audio_decoder();
  if (config.input_field().empty()) {
    return context.FieldError("input_field", "must not be empty");
  }
  if (config.output_field().empty()) {
    return context.FieldError("output_field", "must not be empty");
  }
  if (config.sample_rate() == 0) {
    return context.FieldError("sample_rate", "must be at least 1 (Hz)");
  }
  const std::optional<ResampleQuality> quality =
      ResampleQualityFromName(config.resample_quality());
  if (!quality) {
    return context.FieldError(
        "resample_quality",
        absl::StrCat("is '", config.resample_quality(),
                     "'; expected quick, low, medium, high or very_high"));
  }
  if (!(config.max_seconds() >= 0)) {
    return context.FieldError("max_seconds",
                              "must be at least 0 (0: no limit)");
  }
  if (config.max_channels() == 0) {
    return context.FieldError("max_channels", "must be at least 1");
  }
  if (config.parallelism() == 0) {
    return context.FieldError("parallelism", "must be at least 1");
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Example> * input,
                          context.SingleInput<Example>());
  return std::unique_ptr<Stage>(
      new AudioDecoder(context, config, *quality, input));
}

AudioDecoder::AudioDecoder(const StageContext& context,
                           const AudioDecoderConfig& config,
                           ResampleQuality quality, Channel<Example>* input)
    : StatelessStage(context),
      config_(config),
      quality_(quality),
      limits_{.max_seconds = config.max_seconds(),
              .max_channels = static_cast<int>(config.max_channels())},
      input_(input),
      output_(AddOutput<Example>("output", 64)),
      ordered_(context.ordered()
                   ? AddOrderedOutput(output_, 2 * context.MaxParallelism(
                                                       config.parallelism()))
                   : nullptr),
      gate_(AddParallelismGate(config.parallelism(),
                               context.MaxParallelism(config.parallelism()))) {}

void AudioDecoder::DescribeMemory(MemoryModelBuilder& builder) const {
  const uint64_t encoded = builder.InputItemBytes();
  const uint64_t decoded = kDecodedBytesPerEncodedByte * encoded;
  builder.AddOutput(output_, "output", decoded + kExampleOverheadBytes);
  // Each worker holds a clip encoded, decoded and resampled; in order
  // (deterministic) two decoded clips per worker wait to go out.
  builder.Add(
      {.part = "workers",
       .what = "clips being decoded",
       .knob = MemoryKnob::kParallelism,
       .field = "parallelism",
       .count = config_.parallelism(),
       .min_count = 1,
       .bytes_each = encoded + (ordered_ != nullptr ? 4 : 2) * decoded});
}

void AudioDecoder::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, static_cast<int>(gate_->cap()),
               [this](int index) { return Work(index); });
}

asio::awaitable<void> AudioDecoder::Work(int index) {
  DecodedAudio decoded;
  Resampler resampler(quality_);
  std::vector<float> resampled;
  // One clip is one slice of CPU work.
  co_await RunMapWorker(
      input_, output_, ordered_, load_meter(),
      [&](Example& example, std::vector<Example>& out) {
        if (Decode(example, decoded, resampler, resampled)) {
          out.push_back(std::move(example));
        }
      },
      /*yield_after_each_item=*/true, gate_, index);
}

bool AudioDecoder::Decode(Example& example, DecodedAudio& decoded,
                          Resampler& resampler, std::vector<float>& resampled) {
  std::span<const std::byte> bytes;
  if (std::optional<FieldProblem> problem =
          FindBytes(example, config_.input_field(), bytes)) {
    Skip(problem->reason, example, problem->message);
    return false;
  }
  if (absl::Status status = DecodeAudioInto(bytes, limits_, decoded);
      !status.ok()) {
    const std::optional<AudioSkipReason> reason = AudioSkipReasonOf(status);
    Skip(reason ? AudioSkipReasonName(*reason) : "not_audio", example,
         std::string(status.message()));
    return false;
  }
  const int rate = static_cast<int>(config_.sample_rate());
  const std::vector<float>* samples = &decoded.samples;
  if (decoded.sample_rate != rate) {
    if (absl::Status status = resampler.Resample(
            decoded.samples, decoded.sample_rate, rate, resampled);
        !status.ok()) {
      Skip("malformed", example, std::string(status.message()));
      return false;
    }
    samples = &resampled;
    clips_resampled_.fetch_add(1, std::memory_order_relaxed);
  }
  if (samples->empty()) {
    Skip("empty_clip", example, "no samples left after resampling");
    return false;
  }
  std::vector<std::byte> waveform = FloatBuffer(samples->size());
  std::copy(samples->begin(), samples->end(), AsFloats(waveform).begin());
  const int64_t count = static_cast<int64_t>(samples->size());
  example.Remove(config_.input_field());
  example.Set(config_.output_field(), FloatField({count}, std::move(waveform)));
  clips_decoded_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(bytes.size(), std::memory_order_relaxed);
  output_samples_.fetch_add(static_cast<uint64_t>(count),
                            std::memory_order_relaxed);
  return true;
}

void AudioDecoder::Skip(std::string_view reason, const Example& example,
                        std::string_view message) {
  static RateLimiter limiter(absl::Seconds(5));
  CountSkip(reason);
  if (limiter.Allow()) {
    LogWarning("stage ", name(), " (audio_decoder): skipping ",
               ExampleLabel(example), " (", std::string(reason),
               "): ", std::string(message));
  }
}

void AudioDecoder::AddMetrics(StageMetricProto& metrics) {
  AudioDecoderMetricsProto& out = *metrics.mutable_audio_decoder();
  out.set_clips_decoded(clips_decoded_.exchange(0));
  out.set_clips_resampled(clips_resampled_.exchange(0));
  out.set_bytes(bytes_.exchange(0));
  out.set_audio_seconds(static_cast<double>(output_samples_.exchange(0)) /
                        config_.sample_rate());
}

}  // namespace sluice::audio
