// A small CNN over sluice's log-mel spectrograms, and its loss.
//
// The network: batch norm of the (B, mels, frames) input as one channel,
// three 3x3 convolution blocks (`channels`, 2x and 4x as many; batch norm,
// ReLU, 2x2 max pooling after the first two), average pooling over time and
// to 8 frequency bands (the sounds differ by where they sit in frequency,
// not only by their shape), and a linear layer to `classes` logits. The
// loss: cross-entropy against `label`.
#ifndef CPP_TRAINER_AUDIO_MODEL_H_
#define CPP_TRAINER_AUDIO_MODEL_H_

#include <cstdint>
#include <memory>

#include "conv_block.h"
#include "torch/torch.h"
#include "workload.h"

namespace trainer {

class AudioNetImpl : public torch::nn::Module {
 public:
  AudioNetImpl(int channels, int64_t classes);
  // (B, mels, frames) spectrograms to (B, classes) logits.
  torch::Tensor forward(const torch::Tensor& spectrogram);

 private:
  torch::nn::BatchNorm2d input_norm_;
  ConvBlock first_;
  ConvBlock second_;
  ConvBlock third_;
  torch::nn::Linear classifier_;
};
TORCH_MODULE(AudioNet);

// The audio workload: AudioNet and its cross-entropy; `correct` counts
// clips whose highest logit is their label. Throws std::out_of_range,
// naming the label, for a batch with a label outside [0, classes).
std::unique_ptr<Workload> MakeAudioWorkload(int channels, int64_t classes);

}  // namespace trainer

#endif  // CPP_TRAINER_AUDIO_MODEL_H_
