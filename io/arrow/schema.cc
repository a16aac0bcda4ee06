#include "io/arrow/schema.h"

namespace sluice::io::arrow {

std::string_view TypeName(TypeId type) {
  switch (type) {
    case TypeId::kBool:
      return "bool";
    case TypeId::kInt8:
      return "int8";
    case TypeId::kInt16:
      return "int16";
    case TypeId::kInt32:
      return "int32";
    case TypeId::kInt64:
      return "int64";
    case TypeId::kUInt8:
      return "uint8";
    case TypeId::kUInt16:
      return "uint16";
    case TypeId::kUInt32:
      return "uint32";
    case TypeId::kUInt64:
      return "uint64";
    case TypeId::kFloat16:
      return "float16";
    case TypeId::kFloat32:
      return "float32";
    case TypeId::kFloat64:
      return "float64";
    case TypeId::kBinary:
      return "binary";
    case TypeId::kLargeBinary:
      return "large_binary";
    case TypeId::kUtf8:
      return "utf8";
    case TypeId::kLargeUtf8:
      return "large_utf8";
    case TypeId::kList:
      return "list";
    case TypeId::kLargeList:
      return "large_list";
    case TypeId::kFixedSizeList:
      return "fixed_size_list";
    case TypeId::kStruct:
      return "struct";
  }
  return "unknown";
}

size_t FixedWidthBytes(TypeId type) {
  switch (type) {
    case TypeId::kInt8:
    case TypeId::kUInt8:
      return 1;
    case TypeId::kInt16:
    case TypeId::kUInt16:
    case TypeId::kFloat16:
      return 2;
    case TypeId::kInt32:
    case TypeId::kUInt32:
    case TypeId::kFloat32:
      return 4;
    case TypeId::kInt64:
    case TypeId::kUInt64:
    case TypeId::kFloat64:
      return 8;
    default:
      return 0;
  }
}

bool IsBinaryLike(TypeId type) {
  return type == TypeId::kBinary || type == TypeId::kLargeBinary ||
         type == TypeId::kUtf8 || type == TypeId::kLargeUtf8;
}

size_t FixedRowBytes(const Field& field) {
  if (field.type == TypeId::kFixedSizeList) {
    return field.children.size() == 1 && field.list_size > 0
               ? FixedWidthBytes(field.children[0].type) *
                     static_cast<size_t>(field.list_size)
               : 0;
  }
  return FixedWidthBytes(field.type);
}

int Schema::FieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace sluice::io::arrow
