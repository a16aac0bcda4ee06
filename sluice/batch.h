// sluice::Batch: one batch of training tensors, as a trainer receives it.
//
//   std::optional<sluice::Batch> batch = loader.Next();
//   const sluice::Tensor& planes = batch->tensor("planes");
//   const float* values = planes.data_as<float>();  // checks the dtype
//   // planes.shape = {B, 112, 8, 8}, row-major; planes.dtype == "float32"
//
// The batch owns its one 64-byte-aligned buffer (all tensors live in it)
// and frees it when the last copy of the batch (or of buffer()) is dropped;
// it outlives the loader that produced it. Copies share the buffer: handing
// a batch over never copies tensor data.
#ifndef SLUICE_SLUICE_BATCH_H_
#define SLUICE_SLUICE_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sluice {

// One tensor inside a batch's buffer: batch-first, row-major, of any
// element type.
struct Tensor {
  std::string name;
  // Element type, as numpy spells it: "float32", "float64", "float16",
  // "int64", "int32", "int16", "int8", "uint8" or "bool" (one byte). Every
  // lc0 tensor is "float32".
  std::string dtype = "float32";
  const void* data = nullptr;
  std::vector<int64_t> shape;
  size_t bytes = 0;

  // The data as T, after checking that T is the dtype's C++ type (float,
  // double, int64_t, int32_t, int16_t, int8_t, uint8_t, bool; uint16_t for
  // float16's raw bits); throws std::invalid_argument naming the tensor
  // otherwise.
  template <typename T>
  const T* data_as() const {
    CheckElementType(ElementTypeName<T>());
    return static_cast<const T*>(data);
  }
  // Elements: bytes over the element size.
  size_t elements() const;

 private:
  template <typename T>
  static constexpr const char* ElementTypeName() {
    if constexpr (std::is_same_v<T, float>) {
      return "float32";
    } else if constexpr (std::is_same_v<T, double>) {
      return "float64";
    } else if constexpr (std::is_same_v<T, uint16_t>) {
      return "float16";
    } else if constexpr (std::is_same_v<T, int64_t>) {
      return "int64";
    } else if constexpr (std::is_same_v<T, int32_t>) {
      return "int32";
    } else if constexpr (std::is_same_v<T, int16_t>) {
      return "int16";
    } else if constexpr (std::is_same_v<T, int8_t>) {
      return "int8";
    } else if constexpr (std::is_same_v<T, uint8_t>) {
      return "uint8";
    } else if constexpr (std::is_same_v<T, bool>) {
      return "bool";
    } else {
      static_assert(sizeof(T) == 0, "data_as<T>: T is no tensor element type");
      return "";
    }
  }
  // Throws unless `dtype` is `wanted`.
  void CheckElementType(const char* wanted) const;
};

class Batch {
 public:
  // Positions in the batch (the first dimension of every tensor).
  size_t size() const { return size_; }
  // The tensors, in the pipeline's order (lc0: the training tuple planes,
  // probs, winner, best_q, plies_left).
  const std::vector<Tensor>& tensors() const { return tensors_; }
  // The tensor called `name`; throws std::out_of_range for an unknown name.
  const Tensor& tensor(std::string_view name) const;
  // A shared owner of the buffer, for handing it to other libraries
  // without a copy (the tensors' data stays valid while it lives).
  std::shared_ptr<const void> buffer() const { return buffer_; }

 private:
  friend class Loader;
  Batch(std::shared_ptr<const void> buffer, size_t size,
        std::vector<Tensor> tensors)
      : buffer_(std::move(buffer)), size_(size), tensors_(std::move(tensors)) {}

  std::shared_ptr<const void> buffer_;
  size_t size_ = 0;
  std::vector<Tensor> tensors_;
};

}  // namespace sluice

#endif  // SLUICE_SLUICE_BATCH_H_
