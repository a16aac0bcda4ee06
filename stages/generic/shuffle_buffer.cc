#include "stages/generic/shuffle_buffer.h"

#include "absl/strings/str_cat.h"
#include "engine/status_macros.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<Stage>> ShuffleBuffer::Create(
    const StageContext& context) {
  const ShuffleBufferConfig& config = context.config().shuffle_buffer();
  if (config.size() == 0) {
    return context.FieldError("size", "must be at least 1");
  }
  const uint64_t min_fill =
      config.has_min_fill() ? config.min_fill() : config.size();
  if (min_fill > config.size()) {
    return context.FieldError(
        "min_fill", absl::StrCat("is ", min_fill, " but must be at most size (",
                                 config.size(), ")"));
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Example> * input,
                          context.SingleInput<Example>());
  return std::unique_ptr<Stage>(
      new ShuffleBuffer(context, config.size(), min_fill, input));
}

ShuffleBuffer::ShuffleBuffer(const StageContext& context, uint64_t size,
                             uint64_t min_fill, Channel<Example>* input)
    : ReservoirStage(context, size, min_fill, input,
                     {.items = "examples",
                      .missing_reason = "checkpoint_example_missing",
                      .size_field = "size"}) {}

void ShuffleBuffer::AddMetrics(StageMetricProto& metrics) {
  const ReservoirMetrics reservoir = shuffler().TakeMetrics();
  ShuffleBufferMetricsProto* shuffle = metrics.mutable_shuffle_buffer();
  shuffle->set_capacity(reservoir.capacity);
  shuffle->set_fill(reservoir.fill);
  shuffle->set_examples_received(reservoir.received);
  shuffle->set_examples_emitted(reservoir.emitted);
}

}  // namespace sluice
