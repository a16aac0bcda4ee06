#include "sluice/batch.h"

#include <stdexcept>
#include <utility>

namespace sluice {

void Tensor::CheckElementType(const char* wanted) const {
  if (dtype != wanted) {
    throw std::invalid_argument("sluice::Tensor '" + name + "' holds " + dtype +
                                ", not " + wanted);
  }
}

size_t Tensor::elements() const {
  static constexpr std::pair<const char*, size_t> kSizes[] = {
      {"float32", 4}, {"float64", 8}, {"float16", 2},
      {"int64", 8},   {"int32", 4},   {"int16", 2},
      {"int8", 1},    {"uint8", 1},   {"bool", 1}};
  for (const auto& [name, size] : kSizes) {
    if (dtype == name) return bytes / size;
  }
  return 0;
}

const Tensor& Batch::tensor(std::string_view name) const {
  for (const Tensor& tensor : tensors_) {
    if (tensor.name == name) return tensor;
  }
  throw std::out_of_range("sluice::Batch has no tensor '" + std::string(name) +
                          "'");
}

}  // namespace sluice
