// TypedBatch: one batch of named, typed tensors of any workload, as it
// leaves a pipeline (to C++, Python or batch files). Every tensor is
// batch-first and row-major; all live in memory one owner keeps alive.
//
//   // A batcher lays out its own batch (one 64-byte-aligned buffer):
//   std::vector<BatchTensorSpec> specs = {{"x", DType::kFloat32, {256}},
//                                    {"label", DType::kInt64, {}}};
//   SLUICE_ASSIGN_OR_RETURN(TypedBatch batch,
//                           TypedBatch::Allocate(specs, 1024, pool));
//   float* x = batch.tensor(0).As<float>();      // 1024 x 256 floats
//
//   // A stage with a layout of its own wraps its memory without a copy:
//   TypedBatch wrapped(size, {{"planes", DType::kFloat32, {B, 112, 8, 8},
//                              data, bytes}}, owner);
//
// Copies share the owner: handing a batch on never copies tensor data.
#ifndef SLUICE_ENGINE_TYPED_BATCH_H_
#define SLUICE_ENGINE_TYPED_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/batch_buffer_pool.h"
#include "engine/dtype.h"

namespace sluice {

// A tensor's name, dtype and shape per example (without the batch
// dimension; empty for a scalar).
struct BatchTensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> example_shape;

  // Elements per example: the product of example_shape (1 for a scalar).
  size_t ExampleElements() const;
  // Bytes per example.
  size_t ExampleBytes() const { return ExampleElements() * DTypeSize(dtype); }
};

// One tensor of a batch: `shape[0]` is the batch size.
struct BatchTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  void* data = nullptr;
  size_t bytes = 0;

  // The data as T, unchecked: T must be the dtype's C++ type (DTypeOf<T>;
  // uint16_t for float16). Stages know their layout; the public API
  // (sluice/batch.h) checks.
  template <typename T>
  T* As() const {
    return static_cast<T*>(data);
  }
};

class TypedBatch {
 public:
  // An empty batch (size 0, no tensors).
  TypedBatch() = default;
  // Wraps `tensors` of `size` examples living in memory `owner` keeps alive.
  TypedBatch(size_t size, std::vector<BatchTensor> tensors,
             std::shared_ptr<void> owner);

  // A batch of `size` examples of `specs` in one 64-byte-aligned buffer,
  // each tensor starting on a 64-byte boundary; from `pool` when given (its
  // buffers must be AllocationBytes(specs, size) large; the buffer goes back
  // when the batch's last owner drops it). Contents are uninitialized.
  // InvalidArgument for size 0, no specs, a repeated name or a pool of
  // another size; ResourceExhausted when the allocation fails.
  static absl::StatusOr<TypedBatch> Allocate(
      std::span<const BatchTensorSpec> specs, size_t size,
      std::shared_ptr<BatchBufferPool> pool = nullptr);
  // Bytes of the buffer Allocate() needs for `size` examples of `specs`.
  static size_t AllocationBytes(std::span<const BatchTensorSpec> specs,
                                size_t size);

  // Examples in the batch (the first dimension of every tensor).
  size_t size() const { return size_; }
  const std::vector<BatchTensor>& tensors() const { return tensors_; }
  const BatchTensor& tensor(size_t i) const { return tensors_[i]; }
  // The tensor called `name`, or nullptr.
  const BatchTensor* Find(std::string_view name) const;

  // Keeps the first `size` examples (0 < size <= size()): shapes, byte
  // counts and example ids shrink, data stays in place. For a final,
  // partial batch.
  void Truncate(size_t size);

  // Where each example came from (lc0: its game; generic stages: the
  // example's index), for shuffle-quality metrics and tests; empty when the
  // producer does not say.
  const std::vector<uint64_t>& example_ids() const { return example_ids_; }
  void set_example_ids(std::vector<uint64_t> ids) {
    example_ids_ = std::move(ids);
  }

  // The owner of the tensors' memory: hand it to other libraries (Python)
  // to keep the data alive without a copy.
  const std::shared_ptr<void>& owner() const { return owner_; }

 private:
  size_t size_ = 0;
  std::vector<BatchTensor> tensors_;
  std::shared_ptr<void> owner_;
  std::vector<uint64_t> example_ids_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_TYPED_BATCH_H_
