// lc0's network in small, and its training loss on sluice's lc0 batches.
//
// The network: a 3x3 input convolution to `filters` channels and a tower of
// `blocks` residual blocks over the (B, 112, 8, 8) planes, then lc0's three
// heads: policy (1858 move logits: two 3x3 convolutions to 80 planes of
// moves per square, gathered through lc0's policy map, lc0_policy_map.h),
// value (win/draw/loss logits: a 1x1 convolution to 32 channels and two
// dense layers) and moves left (plies, >= 0: a 1x1 convolution to 8
// channels and two dense layers).
//
// The loss, as lczero-training computes it:
// - policy: cross-entropy of the softmax against `probs`. Illegal moves are
//   marked by negative probs: their logits are replaced by -1e10 (no
//   gradient flows to them) and their targets clamped to 0.
// - value: cross-entropy of the WDL softmax against `winner`.
// - moves left: Huber loss (delta 10 plies) against `plies_left`, both
//   divided by 20 to bring it to the other terms' range.
// The three are summed with weight 1.
#ifndef CPP_TRAINER_LC0_MODEL_H_
#define CPP_TRAINER_LC0_MODEL_H_

#include <memory>

#include "conv_block.h"
#include "torch/torch.h"
#include "workload.h"

namespace trainer {

// Two 3x3 convolutions with batch norm and a skip connection.
class ResidualBlockImpl : public torch::nn::Module {
 public:
  explicit ResidualBlockImpl(int filters);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  ConvBlock first_;
  torch::nn::Conv2d conv_;
  torch::nn::BatchNorm2d norm_;
};
TORCH_MODULE(ResidualBlock);

// The three heads' outputs for a batch of B positions.
struct Lc0Output {
  torch::Tensor policy;      // (B, 1858) logits
  torch::Tensor value;       // (B, 3) win/draw/loss logits
  torch::Tensor moves_left;  // (B,) plies, >= 0
};

class Lc0NetImpl : public torch::nn::Module {
 public:
  Lc0NetImpl(int blocks, int filters);
  Lc0Output forward(const torch::Tensor& planes);

 private:
  ConvBlock input_;
  torch::nn::Sequential tower_;
  ConvBlock policy_conv_;
  torch::nn::Conv2d policy_planes_;
  torch::Tensor policy_gather_;  // lc0_policy_map.h; constant, not saved
  ConvBlock value_conv_;
  torch::nn::Sequential value_fc_;
  ConvBlock moves_left_conv_;
  torch::nn::Sequential moves_left_fc_;
};
TORCH_MODULE(Lc0Net);

// The lc0 workload: Lc0Net and the loss above; `correct` counts positions
// whose highest legal logit is the move with the highest probability.
std::unique_ptr<Workload> MakeLc0Workload(int blocks, int filters);

}  // namespace trainer

#endif  // CPP_TRAINER_LC0_MODEL_H_
