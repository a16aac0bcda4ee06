#include "batch_tensors.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainer {
namespace {

torch::ScalarType ScalarTypeOf(const sluice::Tensor& tensor) {
  const std::string& dtype = tensor.dtype;
  if (dtype == "float32") return torch::kFloat32;
  if (dtype == "float64") return torch::kFloat64;
  if (dtype == "float16") return torch::kFloat16;
  if (dtype == "int64") return torch::kInt64;
  if (dtype == "int32") return torch::kInt32;
  if (dtype == "int16") return torch::kInt16;
  if (dtype == "int8") return torch::kInt8;
  if (dtype == "uint8") return torch::kUInt8;
  if (dtype == "bool") return torch::kBool;
  throw std::invalid_argument("tensor '" + tensor.name + "' has dtype " +
                              dtype + ", which torch has no type for");
}

}  // namespace

torch::Tensor TorchTensor(const sluice::Batch& batch, std::string_view name) {
  const sluice::Tensor& tensor = batch.tensor(name);
  // The deleter's copy of the shared owner keeps the buffer alive until
  // torch frees the tensor's storage; it frees nothing itself.
  std::shared_ptr<const void> owner = batch.buffer();
  return torch::from_blob(
      const_cast<void*>(tensor.data), tensor.shape,
      [owner = std::move(owner)](void*) {},
      torch::TensorOptions().dtype(ScalarTypeOf(tensor)));
}

}  // namespace trainer
