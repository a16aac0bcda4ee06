// The trainer's checkpoint: model, optimizer and loader state in one file,
// written atomically.
//
//   SaveCheckpoint("run.ckpt", {.step = 100, .loader = loader.Checkpoint(),
//                               .settings = workload->settings()},
//                  workload->model(), *optimizer);
//   TrainerCheckpoint saved = TrainerCheckpoint::Read("run.ckpt");
//   loader.ResumeFrom(saved.loader());   // before loader.Start()
//   saved.Restore(workload->model(), *optimizer);
//
// The file is a torch archive (torch::serialize): "model" and "optimizer"
// as their own archives, "step", "loader" (sluice's checkpoint bytes) and
// "settings" (the model's shape) as tensors. It is written to FILE.tmp,
// synced and renamed over FILE: a crash leaves the old checkpoint or the
// new one, never a torn file.
#ifndef CPP_TRAINER_CHECKPOINT_H_
#define CPP_TRAINER_CHECKPOINT_H_

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "torch/torch.h"

namespace trainer {

// A checkpoint that cannot be written, read or used; what() says why.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a checkpoint holds beside the model and the optimizer.
struct CheckpointState {
  int64_t step = 0;      // optimizer steps taken
  std::string loader;    // sluice::Loader::Checkpoint() after `step` batches
  std::string settings;  // Workload::settings()
};

// Writes `state`, the model and the optimizer to `path` atomically; throws
// CheckpointError.
void SaveCheckpoint(const std::string& path, const CheckpointState& state,
                    const torch::nn::Module& model,
                    const torch::optim::Optimizer& optimizer);

class TrainerCheckpoint {
 public:
  // Reads `path`; throws CheckpointError for a missing or damaged file.
  static TrainerCheckpoint Read(const std::string& path);

  const CheckpointState& state() const { return state_; }
  // Loads the model's and the optimizer's state. Throws CheckpointError
  // when the checkpoint's settings are not `settings` (another model).
  void Restore(const std::string& settings, torch::nn::Module& model,
               torch::optim::Optimizer& optimizer);

 private:
  TrainerCheckpoint(std::string path,
                    std::unique_ptr<torch::serialize::InputArchive> archive,
                    CheckpointState state);

  std::string path_;
  std::unique_ptr<torch::serialize::InputArchive> archive_;
  CheckpointState state_;
};

}  // namespace trainer

#endif  // CPP_TRAINER_CHECKPOINT_H_
