// Example: one training example of any workload as it flows between generic
// stages (arrow_source -> decoders -> shuffle_buffer -> batcher): named
// fields, each a typed, shaped buffer that is owned by the field or a view
// into a block shared with other examples (a record batch, a decoded clip).
//
//   Example example;
//   example.Set("label", ExampleField::Scalar<int64_t>(7));
//   example.Set("index", ExampleField::Scalar<int64_t>(row));
//   example.Set("audio", ExampleField::View(DType::kUInt8, {n}, bytes, block));
//   example.Set("x", ExampleField::Owned<float>({256}, std::move(values)));
//   const ExampleField* x = example.Find("x");   // x->bytes(), x->dtype
#ifndef SLUICE_STAGES_GENERIC_EXAMPLE_H_
#define SLUICE_STAGES_GENERIC_EXAMPLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/checkpoint.h"
#include "engine/dtype.h"

namespace sluice {

// One field: `dtype` elements of `shape` (per example; empty for a scalar),
// row-major in bytes(). Scalars and other values of up to 16 bytes are kept
// inline (no allocation); larger owned values live in a vector; views point
// into memory `keep_alive` owns. Copies share views and copy owned bytes.
class ExampleField {
 public:
  ExampleField() = default;

  // A scalar of the C++ type T (see DTypeOf).
  template <typename T>
  static ExampleField Scalar(T value) {
    ExampleField field;
    field.dtype_ = DTypeOf<T>();
    std::memcpy(field.inline_.data(), &value, sizeof(T));
    field.size_ = sizeof(T);
    return field;
  }
  // Owned values of type T with `shape` (their count must be its product).
  template <typename T>
  static ExampleField Owned(std::vector<int64_t> shape, std::vector<T> values) {
    return OwnedBytes(DTypeOf<T>(), std::move(shape),
                      std::as_bytes(std::span<const T>(values)));
  }
  // Owned copy of `bytes` holding `dtype` elements of `shape`.
  static ExampleField OwnedBytes(DType dtype, std::vector<int64_t> shape,
                                 std::span<const std::byte> bytes);
  // Takes `bytes` (`dtype` elements of `shape`) without copying them.
  static ExampleField OwnedBytes(DType dtype, std::vector<int64_t> shape,
                                 std::vector<std::byte>&& bytes);
  // A view of `bytes` (`dtype` elements of `shape`) inside memory that
  // `keep_alive` owns; no copy.
  static ExampleField View(DType dtype, std::vector<int64_t> shape,
                           std::span<const std::byte> bytes,
                           std::shared_ptr<const void> keep_alive);

  DType dtype() const { return dtype_; }
  // Per-example shape; empty for a scalar.
  const std::vector<int64_t>& shape() const { return shape_; }
  // Elements: the product of shape() (1 for a scalar).
  size_t elements() const;
  // The values, row-major.
  std::span<const std::byte> bytes() const;
  // The values as T, unchecked: T must be the dtype's C++ type.
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes().data());
  }
  // The scalar (or first element) as T, unchecked as data().
  template <typename T>
  T scalar() const {
    T value;
    std::memcpy(&value, bytes().data(), sizeof(T));
    return value;
  }

 private:
  DType dtype_ = DType::kUInt8;
  std::vector<int64_t> shape_;
  // Inline values (size_ <= 16, no view, no vector), or
  alignas(8) std::array<std::byte, 16> inline_{};
  // owned values, or
  std::vector<std::byte> owned_;
  // a view into memory that keep_alive_ owns.
  const std::byte* view_ = nullptr;
  std::shared_ptr<const void> keep_alive_;
  size_t size_ = 0;  // bytes
};

// Where a source's example comes from, for checkpoints
// (engine/checkpoint.h): `ref` names it for reading it again, `cursor` is
// its place in the source's stream (arrow_source: see its header). Sources
// that cannot be checkpointed leave it zero.
struct ExampleOrigin {
  ItemRef ref;
  StreamCursor cursor;
  // Read again ahead of the stream by a resuming source.
  bool restored = false;
};

// Named fields in the order they were set, and the example's origin. Few
// fields per example: lookups are linear.
class Example {
 public:
  // Room for `fields` fields without reallocating (a source knows how
  // many it sets).
  void Reserve(size_t fields) { fields_.reserve(fields); }
  // Sets field `name`, replacing one of that name.
  void Set(std::string_view name, ExampleField field);
  // The field called `name`, or nullptr.
  const ExampleField* Find(std::string_view name) const;
  // Removes field `name`; false if there was none.
  bool Remove(std::string_view name);
  const std::vector<std::pair<std::string, ExampleField>>& fields() const {
    return fields_;
  }
  const ExampleOrigin& origin() const { return origin_; }
  void set_origin(const ExampleOrigin& origin) { origin_ = origin; }

 private:
  std::vector<std::pair<std::string, ExampleField>> fields_;
  ExampleOrigin origin_;
};

// Checkpoint references of an example (for ReservoirStage's journal and
// restore).
inline ItemRef CheckpointRef(const Example& example) {
  return example.origin().ref;
}
inline StreamCursor CheckpointCursor(const Example& example) {
  return example.origin().cursor;
}
inline RestoreRole RestoreRoleOf(const Example& example) {
  return example.origin().restored ? RestoreRole::kRestored
                                   : RestoreRole::kStream;
}

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_EXAMPLE_H_
