// A workload: a model and its loss over one kind of sluice batch.
//
//   std::unique_ptr<Workload> workload = MakeWorkload(flags, classes);
//   BatchLoss loss = workload->Loss(batch);
//   loss.loss.backward();
#ifndef CPP_TRAINER_WORKLOAD_H_
#define CPP_TRAINER_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flags.h"
#include "sluice/batch.h"
#include "torch/torch.h"

namespace trainer {

// What the model makes of one batch.
struct BatchLoss {
  torch::Tensor loss;         // scalar; backward() trains the model
  std::vector<double> terms;  // the loss's parts, named by term_names()
  int64_t correct = 0;        // top-1 hits: the policy's best move, the label
};

class Workload {
 public:
  virtual ~Workload() = default;
  // The model: its parameters, buffers and train/eval mode.
  virtual torch::nn::Module& model() = 0;
  // Names of BatchLoss::terms, in order (lc0: policy, value, moves_left).
  virtual std::vector<std::string> term_names() const = 0;
  // What one row of a batch is: "positions" or "clips".
  virtual const char* unit() const = 0;
  // The model's shape as text ("lc0 blocks=4 filters=32"): a checkpoint
  // resumes only into a model with the same.
  virtual std::string settings() const = 0;
  // Forward pass and loss over `batch`, read in place (batch_tensors.h).
  virtual BatchLoss Loss(const sluice::Batch& batch) = 0;
};

// The workload `flags` ask for; `classes` is the audio model's number of
// labels (unused for lc0).
std::unique_ptr<Workload> MakeWorkload(const TrainerFlags& flags,
                                       int64_t classes);

}  // namespace trainer

#endif  // CPP_TRAINER_WORKLOAD_H_
