// PassThrough: forwards every item of its one input (uint64) to its output,
// with `parallelism` coroutines (with autotune, as many as the tuner
// admits: engine/parallelism_gate.h), optionally burning CPU per item; a fault
// injection option makes it throw after N items. Used to exercise the
// engine (throughput, load metrics, failure handling) without chess data.
#ifndef SLUICE_STAGES_GENERIC_PASS_THROUGH_H_
#define SLUICE_STAGES_GENERIC_PASS_THROUGH_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/stateless_stage.h"

namespace sluice {

class PassThrough final : public StatelessStage {
 public:
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  PassThrough(const StageContext& context, const PassThroughConfig& config,
              Channel<uint64_t>* input);
  asio::awaitable<void> Forward(int index);

  const PassThroughConfig config_;
  Channel<uint64_t>* const input_;
  Channel<uint64_t>* const output_;
  // Deterministic mode: results keep the input order; else nullptr.
  OrderedOutput<uint64_t>* const ordered_;
  ParallelismGate* const gate_;
  std::atomic<uint64_t> forwarded_{0};
  std::atomic<uint64_t> seen_{0};
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_PASS_THROUGH_H_
