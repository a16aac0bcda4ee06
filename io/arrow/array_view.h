// ArrayView: one column (or child column) of a record batch, as pointers
// into the batch's body bytes. Nothing is copied; the view is valid while
// the RecordBatch (or the bytes given to ReadIpcBytes) it came from lives.
//
//   const ArrayView& audio = batch.column(0);       // struct<bytes, path>
//   const ArrayView& bytes = audio.child(0);
//   for (int64_t row = 0; row < batch.num_rows(); ++row) {
//     if (audio.IsNull(row) || bytes.IsNull(row)) continue;
//     std::span<const std::byte> wav = bytes.Binary(row);
//   }
//
// Promises: the decoder checked every buffer against the column's length
// before handing out the view (validity bitmap, values, offsets monotonic
// and inside the data, children long enough), so every accessor called with
// a row in [0, length()) and a type that matches type() reads only inside
// the body. Rows outside that range or mismatched types are caller bugs.
// Values are read with memcpy: no alignment is assumed.
#ifndef SLUICE_IO_ARROW_ARRAY_VIEW_H_
#define SLUICE_IO_ARROW_ARRAY_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/arrow/schema.h"

namespace sluice::io::arrow {

class ArrayView {
 public:
  // The buffers of one array, as the decoder found them in the body.
  struct Parts {
    TypeId type = TypeId::kInt32;
    int32_t list_size = 0;  // fixed_size_list only
    int64_t length = 0;
    int64_t null_count = 0;
    // Bit-packed validity, LSB first; empty when every row is valid.
    std::span<const std::byte> validity;
    // (length + 1) offsets of a variable-size type; may be empty when
    // length is 0.
    std::span<const std::byte> offsets;
    // Fixed-width values, bool bits, or the bytes of a binary-like array.
    std::span<const std::byte> values;
    std::vector<ArrayView> children;
  };

  ArrayView() = default;
  explicit ArrayView(Parts parts) : parts_(std::move(parts)) {}

  TypeId type() const { return parts_.type; }
  int64_t length() const { return parts_.length; }
  int64_t null_count() const { return parts_.null_count; }
  // Values per row of a fixed_size_list.
  int32_t list_size() const { return parts_.list_size; }
  size_t num_children() const { return parts_.children.size(); }
  const ArrayView& child(size_t i) const { return parts_.children[i]; }
  // The raw buffers (for zero-copy consumers).
  std::span<const std::byte> validity_bytes() const { return parts_.validity; }
  std::span<const std::byte> values_bytes() const { return parts_.values; }

  // True when row `i` is null.
  bool IsNull(int64_t i) const {
    if (parts_.validity.empty()) return false;
    return (std::to_integer<unsigned>(parts_.validity[i >> 3]) >> (i & 7) &
            1) == 0;
  }

  // Row `i` of a fixed-width column; T must be the column's C++ type
  // (int8_t ... uint64_t, float, double; uint16_t bits for float16).
  template <typename T>
  requires std::is_arithmetic_v<T> T Value(int64_t i)
  const {
    T value;
    std::memcpy(&value, parts_.values.data() + i * sizeof(T), sizeof(T));
    return value;
  }

  // Row `i` of a float16 column, widened to float.
  float Float16(int64_t i) const;

  // Row `i` of a bool column.
  bool Bool(int64_t i) const {
    return (std::to_integer<unsigned>(parts_.values[i >> 3]) >> (i & 7) & 1) !=
           0;
  }

  // Row `i` of a binary-like column (empty for a null row).
  std::span<const std::byte> Binary(int64_t i) const {
    const auto [begin, end] = Range(i);
    return parts_.values.subspan(begin, end - begin);
  }

  // Row `i` of a utf8 / large_utf8 column (bytes as stored, not validated).
  std::string_view String(int64_t i) const {
    const std::span<const std::byte> bytes = Binary(i);
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }

  // The rows [begin, end) of child(0) that make up row `i` of a list,
  // large_list or fixed_size_list column.
  std::pair<int64_t, int64_t> ListRange(int64_t i) const {
    if (parts_.type == TypeId::kFixedSizeList) {
      return {i * parts_.list_size, (i + 1) * parts_.list_size};
    }
    return Range(i);
  }

 private:
  // Offsets i and i + 1 of a variable-size column.
  std::pair<int64_t, int64_t> Range(int64_t i) const {
    if (parts_.type == TypeId::kLargeBinary ||
        parts_.type == TypeId::kLargeUtf8 ||
        parts_.type == TypeId::kLargeList) {
      int64_t pair[2];
      std::memcpy(pair, parts_.offsets.data() + i * 8, sizeof(pair));
      return {pair[0], pair[1]};
    }
    int32_t pair[2];
    std::memcpy(pair, parts_.offsets.data() + i * 4, sizeof(pair));
    return {pair[0], pair[1]};
  }

  Parts parts_;
};

}  // namespace sluice::io::arrow

#endif  // SLUICE_IO_ARROW_ARRAY_VIEW_H_
