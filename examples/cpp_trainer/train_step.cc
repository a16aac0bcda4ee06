#include "train_step.h"

#include <chrono>

namespace trainer {

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(
    const TrainerFlags& flags, torch::nn::Module& model) {
  if (flags.optimizer == "sgd") {
    return std::make_unique<torch::optim::SGD>(
        model.parameters(), torch::optim::SGDOptions(flags.learning_rate)
                                .momentum(0.9)
                                .nesterov(true)
                                .weight_decay(flags.weight_decay));
  }
  return std::make_unique<torch::optim::Adam>(
      model.parameters(), torch::optim::AdamOptions(flags.learning_rate)
                              .weight_decay(flags.weight_decay));
}

void SetLearningRate(torch::optim::Optimizer& optimizer, double rate) {
  for (torch::optim::OptimizerParamGroup& group : optimizer.param_groups()) {
    group.options().set_lr(rate);
  }
}

StepResult TrainStep(Workload& workload, torch::optim::Optimizer& optimizer,
                     const sluice::Batch& batch) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  optimizer.zero_grad();
  BatchLoss loss = workload.Loss(batch);
  loss.loss.backward();
  optimizer.step();
  return {
      .loss = loss.loss.item<double>(),
      .terms = std::move(loss.terms),
      .correct = loss.correct,
      .rows = static_cast<int64_t>(batch.size()),
      .seconds = std::chrono::duration<double>(Clock::now() - start).count()};
}

}  // namespace trainer
