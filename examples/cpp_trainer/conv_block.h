// ConvBlock: the convolution unit both example models are built of.
//
//   ConvBlock block(/*in=*/112, /*out=*/32, /*kernel=*/3);
//   torch::Tensor y = block(x);  // relu(batch_norm(conv(x))), same H x W
#ifndef CPP_TRAINER_CONV_BLOCK_H_
#define CPP_TRAINER_CONV_BLOCK_H_

#include "torch/torch.h"

namespace trainer {

// A kernel x kernel convolution (no bias, padded to keep the size), batch
// norm, ReLU.
class ConvBlockImpl : public torch::nn::Module {
 public:
  ConvBlockImpl(int in, int out, int kernel);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv_;
  torch::nn::BatchNorm2d norm_;
};
TORCH_MODULE(ConvBlock);

}  // namespace trainer

#endif  // CPP_TRAINER_CONV_BLOCK_H_
