#include "conv_block.h"

namespace trainer {

ConvBlockImpl::ConvBlockImpl(int in, int out, int kernel)
    : conv_(torch::nn::Conv2dOptions(in, out, kernel)
                .padding(kernel / 2)
                .bias(false)),
      norm_(out) {
  register_module("conv", conv_);
  register_module("norm", norm_);
}

torch::Tensor ConvBlockImpl::forward(const torch::Tensor& x) {
  return torch::relu(norm_(conv_(x)));
}

}  // namespace trainer
