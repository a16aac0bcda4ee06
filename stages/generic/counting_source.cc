#include "stages/generic/counting_source.h"

#include "engine/status_macros.h"
#include "engine/yield.h"

namespace sluice {
namespace {

// Items sent between two yields to the executor, so a source whose sends
// never suspend (a DROP_NEW output, say) cannot monopolise a thread.
constexpr uint64_t kItemsPerYield = 1024;

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> CountingSource::Create(
    const StageContext& context) {
  SLUICE_RETURN_IF_ERROR(context.RequireNoInputs());
  return std::unique_ptr<Stage>(
      new CountingSource(context, context.config().counting_source()));
}

CountingSource::CountingSource(const StageContext& context,
                               const CountingSourceConfig& config)
    : Stage(context), config_(config), output_(AddOutput<uint64_t>()) {}

void CountingSource::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, 1, [this](int) { return Produce(); });
}

asio::awaitable<void> CountingSource::Produce() {
  const bool forever = config_.count() == 0;
  for (uint64_t i = 0; forever || i < config_.count(); ++i) {
    if (!co_await output_->Send(config_.start() + i, load_meter())) break;
    produced_.fetch_add(1, std::memory_order_relaxed);
    if ((i + 1) % kItemsPerYield == 0) {
      co_await YieldToOtherCoroutines();
    }
  }
}

void CountingSource::AddMetrics(StageMetricProto& metrics) {
  metrics.mutable_counting_source()->set_items_produced(
      produced_.exchange(0, std::memory_order_relaxed));
}

}  // namespace sluice
