#include "sluice/batch.h"

#include <optional>
#include <stdexcept>

#include "engine/dtype.h"

namespace sluice {

void Tensor::CheckElementType(const char* wanted) const {
  if (dtype != wanted) {
    throw std::invalid_argument("sluice::Tensor '" + name + "' holds " + dtype +
                                ", not " + wanted);
  }
}

size_t Tensor::elements() const {
  const std::optional<DType> element = DTypeFromName(dtype);
  return element ? bytes / DTypeSize(*element) : 0;
}

const Tensor& Batch::tensor(std::string_view name) const {
  for (const Tensor& tensor : tensors_) {
    if (tensor.name == name) return tensor;
  }
  throw std::out_of_range("sluice::Batch has no tensor '" + std::string(name) +
                          "'");
}

}  // namespace sluice
