// Schema: the column names and types of an Arrow IPC file or stream, as
// sluice reads them (io/arrow/README.md lists the supported types).
//
//   const Schema& schema = reader->schema();
//   for (const Field& field : schema.fields)
//     std::cout << field.name << ": " << TypeName(field.type) << "\n";
//
// A Schema only ever holds supported types: anything else is refused when
// the metadata is parsed, with a status naming the file, column and feature.
#ifndef SLUICE_IO_ARROW_SCHEMA_H_
#define SLUICE_IO_ARROW_SCHEMA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::io::arrow {

// The supported Arrow logical types.
enum class TypeId : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,  // IEEE half precision; ArrayView::Value<uint16_t> gives the bits
  kFloat32,
  kFloat64,
  kBinary,       // 32-bit offsets
  kLargeBinary,  // 64-bit offsets
  kUtf8,
  kLargeUtf8,
  kList,           // one child, 32-bit offsets
  kLargeList,      // one child, 64-bit offsets
  kFixedSizeList,  // one child, Field::list_size values per row
  kStruct,         // one child per member
};

// Arrow's name of `type` ("int32", "large_utf8", "fixed_size_list", ...).
std::string_view TypeName(TypeId type);

// Bytes per value of a fixed-width type (bool: 0, it is bit-packed), 0 for
// the others.
size_t FixedWidthBytes(TypeId type);

// True for binary, large_binary, utf8 and large_utf8.
bool IsBinaryLike(TypeId type);

// One column, or one child of a nested column.
struct Field {
  std::string name;
  TypeId type = TypeId::kInt32;
  bool nullable = true;
  // Values per row of a fixed_size_list (>= 0); 0 for other types.
  int32_t list_size = 0;
  // The value field of a list type, or the members of a struct.
  std::vector<Field> children;
};

// Bytes per row of a column whose rows all take the same whole number of
// bytes: a fixed-width type other than bool, or a fixed_size_list of one
// (e.g. 1024 for fixed_size_list<float32>[256]); 0 for any other column.
size_t FixedRowBytes(const Field& field);

// The top-level columns, in order.
struct Schema {
  std::vector<Field> fields;

  // Index of the top-level column named `name`, or -1.
  int FieldIndex(std::string_view name) const;
};

}  // namespace sluice::io::arrow

#endif  // SLUICE_IO_ARROW_SCHEMA_H_
