#include "stages/audio/crop_or_pad_stage.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/log.h"
#include "engine/status_macros.h"
#include "engine/yield.h"
#include "stages/audio/internal/example_values.h"
#include "stages/audio/memory_estimates.h"

namespace sluice::audio {

absl::StatusOr<std::unique_ptr<Stage>> CropOrPadStage::Create(
    const StageContext& context) {
  const CropOrPadConfig& config = context.config().crop_or_pad();
  if (config.field().empty()) {
    return context.FieldError("field", "must not be empty");
  }
  if (config.samples() == 0) {
    return context.FieldError("samples", "must be at least 1");
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Example> * input,
                          context.SingleInput<Example>());
  return std::unique_ptr<Stage>(new CropOrPadStage(context, config, input));
}

CropOrPadStage::CropOrPadStage(const StageContext& context,
                               const CropOrPadConfig& config,
                               Channel<Example>* input)
    : StatelessStage(context),
      config_(config),
      mode_(config.mode() == CropOrPadConfig::TRAIN ? CropMode::kTrain
                                                    : CropMode::kEval),
      input_(input),
      output_(AddOutput<Example>("output", 64)) {}

void CropOrPadStage::DescribeMemory(MemoryModelBuilder& builder) const {
  builder.AddOutput(output_, "output",
                    config_.samples() * sizeof(float) + kExampleOverheadBytes);
}

void CropOrPadStage::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, 1, [this](int) { return Work(); });
}

asio::awaitable<void> CropOrPadStage::Work() {
  size_t since_yield = 0;
  while (std::optional<Example> example =
             co_await input_->Receive(load_meter())) {
    if (Crop(*example)) {
      if (!co_await output_->Send(std::move(*example), load_meter())) {
        co_return;
      }
    }
    // About a batch of crops per slice.
    if (++since_yield == 64) {
      since_yield = 0;
      co_await YieldToOtherCoroutines();
    }
  }
}

bool CropOrPadStage::Crop(Example& example) {
  const auto skip = [&](const FieldProblem& problem) {
    static RateLimiter limiter(absl::Seconds(5));
    CountSkip(problem.reason);
    if (limiter.Allow()) {
      LogWarning("stage ", name(), " (crop_or_pad): skipping ",
                 ExampleLabel(example), " (", std::string(problem.reason),
                 "): ", problem.message);
    }
    return false;
  };
  std::span<const float> waveform;
  if (auto problem = FindFloatVector(example, config_.field(), waveform)) {
    return skip(*problem);
  }
  int64_t seed = 0;
  int64_t index = 0;
  if (mode_ == CropMode::kTrain) {
    if (auto problem = FindInt64(example, "seed", seed)) return skip(*problem);
    if (auto problem = FindInt64(example, "index", index)) {
      return skip(*problem);
    }
  }
  const size_t samples = config_.samples();
  if (waveform.size() == samples) {
    unchanged_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  (waveform.size() > samples ? cropped_ : padded_)
      .fetch_add(1, std::memory_order_relaxed);
  std::vector<std::byte> clip = FloatBuffer(samples);
  CropOrPad(waveform, static_cast<uint64_t>(seed), index, mode_,
            AsFloats(clip));
  example.Set(config_.field(),
              FloatField({static_cast<int64_t>(samples)}, std::move(clip)));
  return true;
}

void CropOrPadStage::AddMetrics(StageMetricProto& metrics) {
  CropOrPadMetricsProto& out = *metrics.mutable_crop_or_pad();
  out.set_cropped(cropped_.exchange(0));
  out.set_padded(padded_.exchange(0));
  out.set_unchanged(unchanged_.exchange(0));
}

}  // namespace sluice::audio
