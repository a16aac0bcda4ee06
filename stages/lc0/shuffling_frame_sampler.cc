#include "stages/lc0/shuffling_frame_sampler.h"

#include "absl/strings/str_cat.h"
#include "engine/status_macros.h"

namespace sluice::lc0 {

absl::StatusOr<std::unique_ptr<Stage>> ShufflingFrameSampler::Create(
    const StageContext& context) {
  const ShufflingFrameSamplerConfig& config =
      context.config().shuffling_frame_sampler();
  if (config.reservoir_size() == 0) {
    return context.FieldError("reservoir_size", "must be at least 1");
  }
  const uint64_t min_fill =
      config.has_min_fill() ? config.min_fill() : config.reservoir_size();
  if (min_fill > config.reservoir_size()) {
    return context.FieldError(
        "min_fill",
        absl::StrCat("is ", min_fill, " but must be at most reservoir_size (",
                     config.reservoir_size(), ")"));
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Frame> * input, context.SingleInput<Frame>());
  return std::unique_ptr<Stage>(new ShufflingFrameSampler(
      context, config.reservoir_size(), min_fill, input));
}

ShufflingFrameSampler::ShufflingFrameSampler(const StageContext& context,
                                             uint64_t reservoir_size,
                                             uint64_t min_fill,
                                             Channel<Frame>* input)
    : ReservoirStage(context, reservoir_size, min_fill, input,
                     {.items = "frames",
                      .missing_reason = "checkpoint_frame_missing",
                      .size_field = "reservoir_size"}) {}

void ShufflingFrameSampler::AddMetrics(StageMetricProto& metrics) {
  const ReservoirMetrics reservoir = shuffler().TakeMetrics();
  ShufflingFrameSamplerMetricsProto* sampler =
      metrics.mutable_shuffling_frame_sampler();
  sampler->set_capacity(reservoir.capacity);
  sampler->set_fill(reservoir.fill);
  sampler->set_frames_received(reservoir.received);
  sampler->set_frames_emitted(reservoir.emitted);
  sampler->set_resident_bytes(reservoir.resident_bytes);
}

}  // namespace sluice::lc0
