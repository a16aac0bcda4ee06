#include "stages/generic/pass_through.h"

#include <chrono>
#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "engine/map_worker.h"
#include "engine/status_macros.h"

namespace sluice {
namespace {

// Spins for `nanos` of wall time: a stand-in for real per-item work.
void BurnCpu(uint64_t nanos) {
  if (nanos == 0) return;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::nanoseconds(nanos);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> PassThrough::Create(
    const StageContext& context) {
  const PassThroughConfig& config = context.config().pass_through();
  if (config.parallelism() == 0) {
    return context.FieldError("parallelism", "must be at least 1");
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<uint64_t> * input,
                          context.SingleInput<uint64_t>());
  return std::unique_ptr<Stage>(new PassThrough(context, config, input));
}

PassThrough::PassThrough(const StageContext& context,
                         const PassThroughConfig& config,
                         Channel<uint64_t>* input)
    : StatelessStage(context),
      config_(config),
      input_(input),
      output_(AddOutput<uint64_t>()),
      ordered_(context.ordered()
                   ? AddOrderedOutput(output_, 2 * context.MaxParallelism(
                                                       config.parallelism()))
                   : nullptr),
      gate_(AddParallelismGate(config.parallelism(),
                               context.MaxParallelism(config.parallelism()))) {}

void PassThrough::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, static_cast<int>(gate_->cap()),
               [this](int index) { return Forward(index); });
}

asio::awaitable<void> PassThrough::Forward(int index) {
  co_await RunMapWorker(
      input_, output_, ordered_, load_meter(),
      [this](uint64_t item, std::vector<uint64_t>& out) {
        const uint64_t seen = seen_.fetch_add(1, std::memory_order_relaxed) + 1;
        if (config_.fail_after_items() > 0 &&
            seen > config_.fail_after_items()) {
          throw std::runtime_error(absl::StrCat(
              "injected failure after ", config_.fail_after_items(), " items"));
        }
        BurnCpu(config_.work_nanos_per_item());
        out.push_back(item);
        forwarded_.fetch_add(1, std::memory_order_relaxed);
      },
      /*yield_after_each_item=*/false, gate_, index);
}

void PassThrough::AddMetrics(StageMetricProto& metrics) {
  metrics.mutable_pass_through()->set_items_forwarded(
      forwarded_.exchange(0, std::memory_order_relaxed));
}

}  // namespace sluice
