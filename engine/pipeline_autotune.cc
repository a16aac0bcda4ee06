// Pipeline's autotune (DataLoaderConfig.autotune): the settings the tuner
// may raise, the loop that measures them every kAutotuneTick and applies
// the tuner's choices (engine/autotuner.h), and the pressures it feeds it:
// for a stage's parallelism, the busy share of its active workers; for an
// output channel, how often both its senders and its receivers suspended
// per item passed (a channel too small to absorb their jitter).
#include <algorithm>
#include <utility>
#include <vector>

#include "engine/autotuner.h"
#include "engine/pipeline.h"
#include "engine/worker_placement.h"

namespace sluice {
namespace {

// A stage whose active workers are busy this share of the time or more may
// gain from another worker (pressure 1): in a pipeline bound by hand-offs
// between stages no stage is saturated, yet a second worker overlaps them
// (lc0's unpacker from a bad config: one worker busy 45-85 % of the time,
// and twice the rate with two). The trial decides.
constexpr double kBusyShareForMoreWorkers = 0.3;
// A channel whose senders and receivers each suspended this often per
// item passed is too small (pressure 1).
constexpr double kFlapsPerItemForMoreCapacity = 0.05;
// The most a tuned capacity holds: items, and modelled bytes unless that
// is fewer than kMinTunedCapacity items (large batches).
constexpr uint64_t kMaxTunedCapacity = 4096;
constexpr uint64_t kMaxTunedChannelBytes = uint64_t{64} << 20;
constexpr uint64_t kMinTunedCapacity = 4;

// The modelled bytes of one unit of stage `stage`'s setting `knob` (for a
// capacity, of output `output`); 0 when the model has no such term.
uint64_t BytesEach(const MemoryModel& model, const std::string& stage,
                   MemoryKnob knob, const std::string& output) {
  for (const MemoryTerm& term : model.terms()) {
    if (term.stage == stage && term.knob == knob &&
        (knob != MemoryKnob::kCapacity || term.output == output)) {
      return term.bytes_each;
    }
  }
  return 0;
}

}  // namespace

unsigned Pipeline::Threads() const {
  return options_.worker_threads() > 0
             ? options_.worker_threads()
             : static_cast<unsigned>(std::max<size_t>(AllowedCpus().size(), 1));
}

uint32_t Pipeline::MaxTunedParallelism() const {
  return options_.autotune() ? std::max(4u, 2 * Threads()) : 0;
}

void Pipeline::SetUpAutotune() {
  const MemoryModel model = BuildMemoryModel();
  std::vector<TunedSetting> settings;
  for (const auto& stage : stages_) {
    if (ParallelismGate* gate = stage->parallelism_gate();
        gate != nullptr && gate->cap() > gate->limit()) {
      settings.push_back(
          {.stage = stage->name(),
           .setting = "parallelism",
           .is_parallelism = true,
           .configured = gate->limit(),
           .value = gate->limit(),
           .max = gate->cap(),
           .bytes_each =
               BytesEach(model, stage->name(), MemoryKnob::kParallelism, "")});
      tuned_.push_back({.stage = stage.get(), .gate = gate});
    }
    for (ChannelBase* output : stage->Outputs()) {
      if (output->policy() != OverflowPolicy::kBlock) continue;
      const uint64_t bytes_each = BytesEach(
          model, stage->name(), MemoryKnob::kCapacity, output->name());
      const uint64_t max = std::max<uint64_t>(
          output->capacity(),
          std::min(kMaxTunedCapacity,
                   std::max(kMinTunedCapacity,
                            kMaxTunedChannelBytes /
                                std::max<uint64_t>(bytes_each, 1))));
      if (max <= output->capacity()) continue;
      settings.push_back(
          {.stage = stage->name(),
           .setting = absl::StrCat("output '", output->name(), "' capacity"),
           .configured = output->capacity(),
           .value = output->capacity(),
           .max = max,
           .bytes_each = bytes_each});
      tuned_.push_back({.stage = stage.get(), .channel = output});
    }
  }
  Autotuner::Options options;
  if (options_.memory_budget_bytes() > 0) {
    const uint64_t used = model.Bytes();
    options.headroom_bytes = options_.memory_budget_bytes() > used
                                 ? options_.memory_budget_bytes() - used
                                 : 0;
  }
  autotuner_ = std::make_unique<Autotuner>(std::move(settings), options);
  autotune_metrics_ = autotuner_->Metrics();
}

asio::awaitable<void> Pipeline::AutotuneLoop() {
  struct Totals {
    double busy = 0;
    uint64_t send_waits = 0;
    uint64_t receive_waits = 0;
    uint64_t received = 0;
  };
  auto read = [this] {
    std::vector<Totals> totals;
    for (const Tuned& tuned : tuned_) {
      Totals total;
      if (tuned.gate != nullptr) total.busy = tuned.stage->TotalBusySeconds();
      if (tuned.channel != nullptr) {
        total.send_waits = tuned.channel->send_waits();
        total.receive_waits = tuned.channel->receive_waits();
        total.received = tuned.channel->TotalReceived();
      }
      totals.push_back(total);
    }
    return totals;
  };
  std::vector<Totals> before = read();
  auto progress = [this] {
    uint64_t items = 0;
    for (const auto& stage : stages_) {
      for (const ChannelBase* output : stage->Outputs()) {
        items += output->TotalReceived();
      }
    }
    return items;
  };
  uint64_t progress_before = progress();
  auto at = std::chrono::steady_clock::now();
  while (co_await abort_.SleepFor(kAutotuneTick)) {
    const auto now = std::chrono::steady_clock::now();
    const std::vector<Totals> after = read();
    const uint64_t progress_after = progress();
    AutotuneSample sample{
        .seconds = std::chrono::duration<double>(now - at).count(),
        .progress = progress_after - progress_before};
    const double seconds = std::max(sample.seconds, 1e-6);
    for (size_t i = 0; i < tuned_.size(); ++i) {
      const TunedSetting& setting = autotuner_->settings()[i];
      if (tuned_[i].gate != nullptr) {
        sample.pressure.push_back((after[i].busy - before[i].busy) /
                                  (seconds * setting.value) /
                                  kBusyShareForMoreWorkers);
      } else {
        const uint64_t flaps =
            std::min(after[i].send_waits - before[i].send_waits,
                     after[i].receive_waits - before[i].receive_waits);
        const uint64_t items = after[i].received - before[i].received;
        sample.pressure.push_back(items == 0
                                      ? 0.0
                                      : static_cast<double>(flaps) /
                                            static_cast<double>(items) /
                                            kFlapsPerItemForMoreCapacity);
      }
    }
    for (const Autotuner::Change& change : autotuner_->Tick(sample)) {
      const Tuned& tuned = tuned_[change.index];
      if (tuned.gate != nullptr) tuned.gate->SetLimit(change.value);
      if (tuned.channel != nullptr) tuned.channel->SetCapacity(change.value);
    }
    {
      std::lock_guard lock(metrics_mu_);
      autotune_metrics_ = autotuner_->Metrics();
    }
    before = after;
    progress_before = progress_after;
    at = now;
  }
}

}  // namespace sluice
