// One optimizer step on one sluice batch, and the optimizer that takes it.
//
//   auto optimizer = MakeOptimizer(flags, workload->model());
//   std::optional<sluice::Batch> batch = feed.Next();
//   StepResult step = TrainStep(*workload, *optimizer, *batch);
#ifndef CPP_TRAINER_TRAIN_STEP_H_
#define CPP_TRAINER_TRAIN_STEP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "flags.h"
#include "sluice/batch.h"
#include "torch/torch.h"
#include "workload.h"

namespace trainer {

// What one step did.
struct StepResult {
  double loss = 0;
  std::vector<double> terms;  // Workload::term_names()
  int64_t correct = 0;        // top-1 hits in the batch
  int64_t rows = 0;           // positions or clips in the batch
  double seconds = 0;         // forward, backward and update
};

// Adam, or SGD with momentum 0.9 (Nesterov), over the model's parameters
// with the flags' learning rate and weight decay.
std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(
    const TrainerFlags& flags, torch::nn::Module& model);

// Sets every parameter group's learning rate (after a checkpoint's
// optimizer state, which carries the old one, was loaded).
void SetLearningRate(torch::optim::Optimizer& optimizer, double rate);

// Forward pass, loss, backward pass and update on `batch`. The model reads
// the batch's buffer in place (batch_tensors.h): the caller keeps `batch`
// alive until TrainStep returns, and the tensors it made hold a share of the
// buffer for as long as autograd keeps them.
StepResult TrainStep(Workload& workload, torch::optim::Optimizer& optimizer,
                     const sluice::Batch& batch);

}  // namespace trainer

#endif  // CPP_TRAINER_TRAIN_STEP_H_
