#include "lc0_model.h"

#include <string>
#include <vector>

#include "batch_tensors.h"
#include "lc0_policy_map.h"

namespace trainer {
namespace {

constexpr int kInputPlanes = 112;
constexpr int kSquares = 64;
// lczero-training's constants.
constexpr double kIllegalMoveLogit = -1.0e10;
constexpr double kMovesLeftScale = 20.0;
constexpr double kMovesLeftHuberDelta = 10.0 / kMovesLeftScale;

namespace nn = torch::nn;

// Policy cross-entropy with illegal moves (probs < 0) masked out; the mask
// is returned too, for the accuracy.
torch::Tensor PolicyLoss(const torch::Tensor& logits,
                         const torch::Tensor& probs, torch::Tensor& masked) {
  masked = logits.masked_fill(probs < 0, kIllegalMoveLogit);
  const torch::Tensor target = probs.clamp_min(0);
  return -(target * torch::log_softmax(masked, 1)).sum(1).mean();
}

class Lc0Workload : public Workload {
 public:
  Lc0Workload(int blocks, int filters)
      : blocks_(blocks), filters_(filters), net_(blocks, filters) {}

  torch::nn::Module& model() override { return *net_; }
  std::vector<std::string> term_names() const override {
    return {"policy", "value", "moves_left"};
  }
  const char* unit() const override { return "positions"; }
  std::string settings() const override {
    return "lc0 blocks=" + std::to_string(blocks_) +
           " filters=" + std::to_string(filters_);
  }

  BatchLoss Loss(const sluice::Batch& batch) override {
    const Lc0Output out = net_->forward(TorchTensor(batch, "planes"));
    const torch::Tensor probs = TorchTensor(batch, "probs");
    torch::Tensor masked;
    const torch::Tensor policy = PolicyLoss(out.policy, probs, masked);
    const torch::Tensor value =
        -(TorchTensor(batch, "winner") * torch::log_softmax(out.value, 1))
             .sum(1)
             .mean();
    const torch::Tensor moves_left =
        torch::huber_loss(out.moves_left / kMovesLeftScale,
                          TorchTensor(batch, "plies_left") / kMovesLeftScale,
                          at::Reduction::Mean, kMovesLeftHuberDelta);
    const torch::Tensor hits = (masked.argmax(1) == probs.argmax(1)).sum();
    return {.loss = policy + value + moves_left,
            .terms = {policy.item<double>(), value.item<double>(),
                      moves_left.item<double>()},
            .correct = hits.item<int64_t>()};
  }

 private:
  int blocks_;
  int filters_;
  Lc0Net net_;
};

}  // namespace

ResidualBlockImpl::ResidualBlockImpl(int filters)
    : first_(filters, filters, 3),
      conv_(nn::Conv2dOptions(filters, filters, 3).padding(1).bias(false)),
      norm_(filters) {
  register_module("first", first_);
  register_module("conv", conv_);
  register_module("norm", norm_);
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  return torch::relu(x + norm_(conv_(first_(x))));
}

Lc0NetImpl::Lc0NetImpl(int blocks, int filters)
    : input_(kInputPlanes, filters, 3),
      policy_conv_(filters, filters, 3),
      policy_planes_(nn::Conv2dOptions(filters, kPolicyPlanes, 3).padding(1)),
      policy_gather_(torch::tensor(ConvPolicyGather(), torch::kInt64)),
      value_conv_(filters, 32, 1),
      value_fc_(nn::Linear(32 * kSquares, 128), nn::ReLU(), nn::Linear(128, 3)),
      moves_left_conv_(filters, 8, 1),
      moves_left_fc_(nn::Linear(8 * kSquares, 128), nn::ReLU(),
                     nn::Linear(128, 1), nn::ReLU()) {
  for (int i = 0; i < blocks; ++i) tower_->push_back(ResidualBlock(filters));
  register_module("input", input_);
  register_module("tower", tower_);
  register_module("policy_conv", policy_conv_);
  register_module("policy_planes", policy_planes_);
  register_module("value_conv", value_conv_);
  register_module("value_fc", value_fc_);
  register_module("moves_left_conv", moves_left_conv_);
  register_module("moves_left_fc", moves_left_fc_);
}

Lc0Output Lc0NetImpl::forward(const torch::Tensor& planes) {
  const torch::Tensor x = tower_->forward(input_(planes));
  return {
      .policy = policy_planes_(policy_conv_(x))
                    .flatten(1)
                    .index_select(1, policy_gather_),
      .value = value_fc_->forward(value_conv_(x).flatten(1)),
      .moves_left =
          moves_left_fc_->forward(moves_left_conv_(x).flatten(1)).squeeze(1)};
}

std::unique_ptr<Workload> MakeLc0Workload(int blocks, int filters) {
  return std::make_unique<Lc0Workload>(blocks, filters);
}

}  // namespace trainer
