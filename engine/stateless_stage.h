// StatelessStage: the base of a stage that keeps nothing between items and,
// in deterministic mode, hands its output on in input order (a map stage
// such as a decoder). Checkpoints pass through it: a ResumeRequest from the
// stage below goes unchanged to the stage above, as do acknowledgements
// (in the unit of the stage above) and an elastic resume's requests, and
// its saved state is empty.
#ifndef SLUICE_ENGINE_STATELESS_STAGE_H_
#define SLUICE_ENGINE_STATELESS_STAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/checkpoint.h"
#include "engine/stage.h"

namespace sluice {

class StatelessStage : public Stage {
 public:
  void Acknowledge(uint64_t consumed) override {
    if (upstream() != nullptr) upstream()->Acknowledge(consumed);
  }
  ResumeUnit resume_unit() const override {
    return upstream() != nullptr ? upstream()->resume_unit()
                                 : ResumeUnit::kItems;
  }
  absl::StatusOr<std::optional<ResumeRequest>> SaveCheckpoint(
      const ResumeRequest& downstream, std::string* state) override {
    return downstream;
  }
  absl::Status RestoreCheckpoint(const std::string& state) override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<ElasticRequest>> PlanElasticResume(
      const std::vector<std::string>& states, const ElasticRequest& downstream,
      ElasticResume& resume) override {
    return downstream;
  }

 protected:
  using Stage::Stage;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_STATELESS_STAGE_H_
