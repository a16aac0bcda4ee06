#include "sluice/batch.h"

#include <stdexcept>

namespace sluice {

const Tensor& Batch::tensor(std::string_view name) const {
  for (const Tensor& tensor : tensors_) {
    if (tensor.name == name) return tensor;
  }
  throw std::out_of_range("sluice::Batch has no tensor '" + std::string(name) +
                          "'");
}

}  // namespace sluice
