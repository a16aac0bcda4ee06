#include "audio_model.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "batch_tensors.h"

namespace trainer {
namespace {

constexpr int64_t kFrequencyBands = 8;

class AudioWorkload : public Workload {
 public:
  AudioWorkload(int channels, int64_t classes)
      : channels_(channels), classes_(classes), net_(channels, classes) {}

  torch::nn::Module& model() override { return *net_; }
  std::vector<std::string> term_names() const override { return {}; }
  const char* unit() const override { return "clips"; }
  std::string settings() const override {
    return "audio channels=" + std::to_string(channels_) +
           " classes=" + std::to_string(classes_);
  }

  BatchLoss Loss(const sluice::Batch& batch) override {
    const torch::Tensor label = TorchTensor(batch, "label");
    const int64_t largest = label.max().item<int64_t>();
    const int64_t smallest = label.min().item<int64_t>();
    if (smallest < 0 || largest >= classes_) {
      throw std::out_of_range(
          "label " + std::to_string(smallest < 0 ? smallest : largest) +
          " is outside the model's " + std::to_string(classes_) +
          " classes (pass --classes)");
    }
    const torch::Tensor logits =
        net_->forward(TorchTensor(batch, "spectrogram"));
    const torch::Tensor loss = torch::cross_entropy_loss(logits, label);
    return {.loss = loss,
            .terms = {},
            .correct = (logits.argmax(1) == label).sum().item<int64_t>()};
  }

 private:
  int channels_;
  int64_t classes_;
  AudioNet net_;
};

}  // namespace

AudioNetImpl::AudioNetImpl(int channels, int64_t classes)
    : input_norm_(1),
      first_(1, channels, 3),
      second_(channels, 2 * channels, 3),
      third_(2 * channels, 4 * channels, 3),
      classifier_(4 * channels * kFrequencyBands, classes) {
  register_module("input_norm", input_norm_);
  register_module("first", first_);
  register_module("second", second_);
  register_module("third", third_);
  register_module("classifier", classifier_);
}

torch::Tensor AudioNetImpl::forward(const torch::Tensor& spectrogram) {
  torch::Tensor x = input_norm_(spectrogram.unsqueeze(1));
  x = torch::max_pool2d(first_(x), 2);
  x = torch::max_pool2d(second_(x), 2);
  x = torch::adaptive_avg_pool2d(third_(x), {kFrequencyBands, 1});
  return classifier_(x.flatten(1));
}

std::unique_ptr<Workload> MakeAudioWorkload(int channels, int64_t classes) {
  return std::make_unique<AudioWorkload>(channels, classes);
}

}  // namespace trainer
