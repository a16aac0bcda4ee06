#include "stages/audio/spectrogram_stage.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "engine/map_worker.h"
#include "engine/status_macros.h"
#include "stages/audio/internal/example_values.h"
#include "stages/audio/memory_estimates.h"

namespace sluice::audio {
namespace {

using Proto = ::sluice::SpectrogramConfig;

// The transform's config from the stage's, or an error naming the field.
absl::StatusOr<SpectrogramConfig> FromProto(const StageContext& context,
                                            const Proto& proto) {
  SpectrogramConfig config{.sample_rate = static_cast<int>(proto.sample_rate()),
                           .n_fft = static_cast<int>(proto.n_fft()),
                           .power = proto.power(),
                           .center = proto.center(),
                           .log_floor = proto.log_floor()};
  if (proto.win_length() > 0) config.win_length = proto.win_length();
  if (proto.hop_length() > 0) config.hop_length = proto.hop_length();
  if (proto.n_mels() > 0) {
    MelConfig mel{.n_mels = static_cast<int>(proto.n_mels()),
                  .f_min = proto.f_min()};
    if (proto.f_max() > 0) mel.f_max = proto.f_max();
    if (proto.mel_scale() == "htk") {
      mel.mel_scale = MelScale::kHtk;
    } else if (proto.mel_scale() == "slaney") {
      mel.mel_scale = MelScale::kSlaney;
    } else {
      return context.FieldError(
          "mel_scale",
          absl::StrCat("is '", proto.mel_scale(), "'; expected htk or slaney"));
    }
    if (proto.mel_norm().empty()) {
      mel.norm = MelNorm::kNone;
    } else if (proto.mel_norm() == "slaney") {
      mel.norm = MelNorm::kSlaney;
    } else {
      return context.FieldError(
          "mel_norm", absl::StrCat("is '", proto.mel_norm(),
                                   "'; expected \"\" (none) or slaney"));
    }
    config.mel = mel;
  }
  switch (proto.log()) {
    case Proto::NONE:
      config.log = LogScale::kNone;
      break;
    case Proto::LOG:
      config.log = LogScale::kNaturalLog;
      break;
    case Proto::DB:
      config.log = LogScale::kDecibels;
      break;
  }
  if (proto.top_db() > 0) config.top_db = proto.top_db();
  if (absl::StatusOr<Spectrogram> check = Spectrogram::Create(config);
      !check.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stage '", context.name(),
        "' (spectrogram): ", std::string(check.status().message())));
  }
  return config;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> SpectrogramStage::Create(
    const StageContext& context) {
  const Proto& proto = context.config().spectrogram();
  if (proto.input_field().empty()) {
    return context.FieldError("input_field", "must not be empty");
  }
  if (proto.output_field().empty()) {
    return context.FieldError("output_field", "must not be empty");
  }
  if (proto.parallelism() == 0) {
    return context.FieldError("parallelism", "must be at least 1");
  }
  SLUICE_ASSIGN_OR_RETURN(SpectrogramConfig config, FromProto(context, proto));
  SLUICE_ASSIGN_OR_RETURN(Channel<Example> * input,
                          context.SingleInput<Example>());
  return std::unique_ptr<Stage>(
      new SpectrogramStage(context, config, proto, input));
}

SpectrogramStage::SpectrogramStage(const StageContext& context,
                                   const SpectrogramConfig& config,
                                   const Proto& proto, Channel<Example>* input)
    : StatelessStage(context),
      config_(config),
      input_field_(proto.input_field()),
      output_field_(proto.output_field()),
      parallelism_(proto.parallelism()),
      input_(input),
      output_(AddOutput<Example>("output", 64)),
      ordered_(context.ordered()
                   ? AddOrderedOutput(output_,
                                      2 * context.MaxParallelism(parallelism_))
                   : nullptr),
      gate_(AddParallelismGate(parallelism_,
                               context.MaxParallelism(parallelism_))) {}

void SpectrogramStage::DescribeMemory(MemoryModelBuilder& builder) const {
  // The input's waveform length from its bytes (a cropped waveform).
  const uint64_t waveform = builder.InputItemBytes();
  const uint64_t samples =
      waveform > kExampleOverheadBytes
          ? (waveform - kExampleOverheadBytes) / sizeof(float)
          : 0;
  uint64_t spectrogram_bytes = 0;
  if (absl::StatusOr<Spectrogram> spectrogram = Spectrogram::Create(config_);
      spectrogram.ok()) {
    spectrogram_bytes =
        spectrogram->rows() * spectrogram->NumFrames(samples) * sizeof(float);
  }
  const uint64_t item = spectrogram_bytes + kExampleOverheadBytes;
  builder.AddOutput(output_, "output", item);
  // Each worker holds a waveform and its spectrogram; in order
  // (deterministic) two spectrograms per worker wait to go out.
  builder.Add({.part = "workers",
               .what = "spectrograms being computed",
               .knob = MemoryKnob::kParallelism,
               .field = "parallelism",
               .count = parallelism_,
               .min_count = 1,
               .bytes_each = waveform + (ordered_ != nullptr ? 3 : 1) * item});
}

void SpectrogramStage::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, static_cast<int>(gate_->cap()),
               [this](int index) { return Work(index); });
}

asio::awaitable<void> SpectrogramStage::Work(int index) {
  absl::StatusOr<Spectrogram> spectrogram = Spectrogram::Create(config_);
  if (!spectrogram.ok()) {  // checked at build time; FFTW may still fail
    throw std::runtime_error(absl::StrCat(
        "stage '", name(), "': ", std::string(spectrogram.status().message())));
  }
  // One spectrogram is one slice of CPU work.
  co_await RunMapWorker(
      input_, output_, ordered_, load_meter(),
      [&](Example& example, std::vector<Example>& out) {
        if (Transform(example, *spectrogram)) {
          out.push_back(std::move(example));
        }
      },
      /*yield_after_each_item=*/true, gate_, index);
}

bool SpectrogramStage::Transform(Example& example, Spectrogram& spectrogram) {
  const auto skip = [&](std::string_view reason, std::string_view message) {
    static RateLimiter limiter(absl::Seconds(5));
    CountSkip(reason);
    if (limiter.Allow()) {
      LogWarning("stage ", name(), " (spectrogram): skipping ",
                 ExampleLabel(example), " (", std::string(reason),
                 "): ", std::string(message));
    }
    return false;
  };
  std::span<const float> waveform;
  if (auto problem = FindFloatVector(example, input_field_, waveform)) {
    return skip(problem->reason, problem->message);
  }
  const size_t frames = spectrogram.NumFrames(waveform.size());
  if (frames == 0) {
    return skip("too_short",
                absl::StrCat(waveform.size(), " samples are too few for n_fft ",
                             config_.n_fft));
  }
  std::vector<std::byte> out =
      FloatBuffer(spectrogram.OutputSize(waveform.size()));
  if (absl::Status status = spectrogram.Compute(waveform, AsFloats(out));
      !status.ok()) {
    return skip("too_short", std::string(status.message()));
  }
  example.Remove(input_field_);
  example.Set(output_field_,
              FloatField({spectrogram.rows(), static_cast<int64_t>(frames)},
                         std::move(out)));
  spectrograms_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void SpectrogramStage::AddMetrics(StageMetricProto& metrics) {
  metrics.mutable_spectrogram()->set_spectrograms(spectrograms_.exchange(0));
}

}  // namespace sluice::audio
