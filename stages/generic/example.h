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
//
// A source that makes many examples names its fields once
// (`const FieldName audio("audio")`) and sets them by that name: an example
// then holds a pointer per field name, not a string, and names compare by
// pointer.
#ifndef SLUICE_STAGES_GENERIC_EXAMPLE_H_
#define SLUICE_STAGES_GENERIC_EXAMPLE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/checkpoint.h"
#include "engine/dtype.h"

namespace sluice {

// The name of an example field, interned: one copy of each distinct name
// for the life of the process, so that a FieldName is a pointer, cheap to
// copy and compared by address. Making one looks the name up under a
// process-wide lock: make names once, not per example.
class FieldName {
 public:
  explicit FieldName(std::string_view name);

  const std::string& str() const { return *name_; }
  operator std::string_view() const { return *name_; }
  operator const std::string&() const { return *name_; }

  friend bool operator==(FieldName a, FieldName b) {
    return a.name_ == b.name_;
  }
  friend bool operator==(FieldName a, std::string_view b) {
    return *a.name_ == b;
  }

 private:
  const std::string* name_;
};

// A field's per-example shape: up to kInline dimensions kept inline (no
// allocation), more in a vector. Compares equal to a std::vector of the
// same dimensions.
class ExampleShape {
 public:
  using value_type = int64_t;
  using const_iterator = const int64_t*;
  using iterator = const int64_t*;
  static constexpr size_t kInline = 4;

  ExampleShape() = default;
  ExampleShape(std::initializer_list<int64_t> dimensions)
      : ExampleShape(
            std::span<const int64_t>(dimensions.begin(), dimensions.size())) {}
  ExampleShape(const std::vector<int64_t>& dimensions)
      : ExampleShape(std::span<const int64_t>(dimensions)) {}
  explicit ExampleShape(std::span<const int64_t> dimensions);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* data() const {
    return size_ <= kInline ? inline_.data() : spilled_.data();
  }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t operator[](size_t i) const { return data()[i]; }
  operator std::vector<int64_t>() const { return {begin(), end()}; }

  friend bool operator==(const ExampleShape& a, const ExampleShape& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const ExampleShape& a, const std::vector<int64_t>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::array<int64_t, kInline> inline_{};
  std::vector<int64_t> spilled_;  // more than kInline dimensions
  size_t size_ = 0;
};

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
  static ExampleField Owned(ExampleShape shape, std::vector<T> values) {
    return OwnedBytes(DTypeOf<T>(), std::move(shape),
                      std::as_bytes(std::span<const T>(values)));
  }
  // Owned copy of `bytes` holding `dtype` elements of `shape`.
  static ExampleField OwnedBytes(DType dtype, ExampleShape shape,
                                 std::span<const std::byte> bytes);
  // Takes `bytes` (`dtype` elements of `shape`) without copying them.
  static ExampleField OwnedBytes(DType dtype, ExampleShape shape,
                                 std::vector<std::byte>&& bytes);
  // A view of `bytes` (`dtype` elements of `shape`) inside memory that
  // `keep_alive` owns; no copy.
  static ExampleField View(DType dtype, ExampleShape shape,
                           std::span<const std::byte> bytes,
                           std::shared_ptr<const void> keep_alive);

  DType dtype() const { return dtype_; }
  // Per-example shape; empty for a scalar.
  const ExampleShape& shape() const { return shape_; }
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
  ExampleShape shape_;
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
// fields per example: lookups are linear (by address for a FieldName).
class Example {
 public:
  // Room for `fields` fields without reallocating (a source knows how
  // many it sets).
  void Reserve(size_t fields) { fields_.reserve(fields); }
  // Sets field `name`, replacing one of that name.
  void Set(FieldName name, ExampleField field);
  // As above, interning `name` first (FieldName).
  void Set(std::string_view name, ExampleField field) {
    Set(FieldName(name), std::move(field));
  }
  // The field called `name`, or nullptr.
  const ExampleField* Find(std::string_view name) const;
  const ExampleField* Find(FieldName name) const;
  // Removes field `name`; false if there was none.
  bool Remove(std::string_view name);
  const std::vector<std::pair<FieldName, ExampleField>>& fields() const {
    return fields_;
  }
  const ExampleOrigin& origin() const { return origin_; }
  void set_origin(const ExampleOrigin& origin) { origin_ = origin; }

 private:
  std::vector<std::pair<FieldName, ExampleField>> fields_;
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
