// sluice::Batch: one batch of training tensors, as a trainer receives it.
//
//   std::optional<sluice::Batch> batch = loader.Next();
//   const sluice::Tensor& planes = batch->tensor("planes");
//   // planes.data: planes.shape = {B, 112, 8, 8} floats, row-major
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
#include <vector>

namespace sluice {

// One tensor inside a batch's buffer: batch-first, row-major.
struct Tensor {
  std::string name;
  // Element type, as numpy spells it; every lc0 tensor is "float32".
  std::string dtype = "float32";
  const float* data = nullptr;
  std::vector<int64_t> shape;
  size_t bytes = 0;
};

class Batch {
 public:
  // Positions in the batch (the first dimension of every tensor).
  size_t size() const { return size_; }
  // The tensors, in the order of the training tuple: planes, probs, winner,
  // best_q, plies_left.
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
