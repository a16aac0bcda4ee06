// CountingSource: emits start, start+1, ... — `count` items, or forever
// when count is 0 — then closes its output. Used to exercise the engine
// without chess data.
#ifndef SLUICE_STAGES_GENERIC_COUNTING_SOURCE_H_
#define SLUICE_STAGES_GENERIC_COUNTING_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/stage.h"

namespace sluice {

class CountingSource final : public Stage {
 public:
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  CountingSource(const StageContext& context,
                 const CountingSourceConfig& config);
  asio::awaitable<void> Produce();

  const CountingSourceConfig config_;
  Channel<uint64_t>* output_;
  std::atomic<uint64_t> produced_{0};
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_COUNTING_SOURCE_H_
