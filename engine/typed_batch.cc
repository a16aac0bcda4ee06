#include "engine/typed_batch.h"

#include <cstdlib>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

constexpr size_t RoundUp(size_t bytes) {
  return (bytes + kBatchBufferAlignment - 1) / kBatchBufferAlignment *
         kBatchBufferAlignment;
}

// Frees a buffer, or hands it back to its pool.
struct BufferDeleter {
  std::shared_ptr<BatchBufferPool> pool;
  void operator()(void* buffer) const {
    if (pool != nullptr) {
      pool->Release(buffer);
    } else {
      std::free(buffer);
    }
  }
};

}  // namespace

size_t BatchTensorSpec::ExampleElements() const {
  size_t elements = 1;
  for (int64_t dimension : example_shape) {
    elements *= static_cast<size_t>(dimension);
  }
  return elements;
}

TypedBatch::TypedBatch(size_t size, std::vector<BatchTensor> tensors,
                       std::shared_ptr<void> owner)
    : size_(size), tensors_(std::move(tensors)), owner_(std::move(owner)) {}

size_t TypedBatch::AllocationBytes(std::span<const BatchTensorSpec> specs,
                                   size_t size) {
  size_t bytes = 0;
  for (const BatchTensorSpec& spec : specs)
    bytes += RoundUp(spec.ExampleBytes() * size);
  return bytes;
}

absl::StatusOr<TypedBatch> TypedBatch::Allocate(
    std::span<const BatchTensorSpec> specs, size_t size,
    std::shared_ptr<BatchBufferPool> pool) {
  if (size == 0) {
    return absl::InvalidArgumentError("a batch needs at least 1 example");
  }
  if (specs.empty()) {
    return absl::InvalidArgumentError("a batch needs at least 1 tensor");
  }
  std::set<std::string_view> names;
  size_t example_bytes = 0;
  for (const BatchTensorSpec& spec : specs) {
    if (!names.insert(spec.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", spec.name, "' is named twice"));
    }
    for (int64_t dimension : spec.example_shape) {
      if (dimension < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", spec.name, "' has a negative dimension"));
      }
    }
    example_bytes += spec.ExampleBytes() + kBatchBufferAlignment;
  }
  if (size > (std::numeric_limits<size_t>::max() / 2) / example_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a batch of ", size, " examples is too large"));
  }
  const size_t bytes = AllocationBytes(specs, size);
  if (pool != nullptr && pool->bytes() != bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the buffer pool holds ", pool->bytes(),
                     "-byte buffers; this batch needs ", bytes));
  }
  void* buffer = pool != nullptr ? pool->Acquire()
                                 : std::aligned_alloc(kBatchBufferAlignment,
                                                      RoundUp(bytes));
  if (buffer == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate a ", bytes, "-byte batch"));
  }
  std::shared_ptr<void> owner(buffer, BufferDeleter{std::move(pool)});
  std::vector<BatchTensor> tensors;
  tensors.reserve(specs.size());
  size_t offset = 0;
  for (const BatchTensorSpec& spec : specs) {
    BatchTensor& tensor = tensors.emplace_back();
    tensor.name = spec.name;
    tensor.dtype = spec.dtype;
    tensor.shape.push_back(static_cast<int64_t>(size));
    tensor.shape.insert(tensor.shape.end(), spec.example_shape.begin(),
                        spec.example_shape.end());
    tensor.data = static_cast<std::byte*>(buffer) + offset;
    tensor.bytes = spec.ExampleBytes() * size;
    offset += RoundUp(tensor.bytes);
  }
  return TypedBatch(size, std::move(tensors), std::move(owner));
}

const BatchTensor* TypedBatch::Find(std::string_view name) const {
  for (const BatchTensor& tensor : tensors_) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

void TypedBatch::Truncate(size_t size) {
  if (size == 0 || size >= size_) return;
  for (BatchTensor& tensor : tensors_) {
    tensor.bytes = tensor.bytes / size_ * size;
    tensor.shape[0] = static_cast<int64_t>(size);
  }
  if (example_ids_.size() > size) example_ids_.resize(size);
  size_ = size;
}

}  // namespace sluice
