// DType: the element types a tensor of any workload may have, with numpy's
// names ("float32", "int64", "bool", ...) and sizes.
//
//   DType dtype = DTypeOf<int64_t>();         // DType::kInt64
//   size_t bytes = DTypeSize(dtype) * count;  // 8 per element
//   std::optional<DType> parsed = DTypeFromName("float16");
#ifndef SLUICE_ENGINE_DTYPE_H_
#define SLUICE_ENGINE_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace sluice {

enum class DType : uint8_t {
  kFloat32,
  kFloat64,
  kFloat16,  // IEEE 754 binary16, stored as 2 bytes (no C++ type here)
  kInt64,
  kInt32,
  kInt16,
  kInt8,
  kUInt8,
  kBool,  // one byte, 0 or 1
};

// Bytes of one element.
constexpr size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
    case DType::kInt64:
      return 8;
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kFloat16:
    case DType::kInt16:
      return 2;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool:
      return 1;
  }
  return 0;
}

// numpy's name of `dtype`: "float32", "float64", "float16", "int64",
// "int32", "int16", "int8", "uint8" or "bool".
constexpr std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kFloat16:
      return "float16";
    case DType::kInt64:
      return "int64";
    case DType::kInt32:
      return "int32";
    case DType::kInt16:
      return "int16";
    case DType::kInt8:
      return "int8";
    case DType::kUInt8:
      return "uint8";
    case DType::kBool:
      return "bool";
  }
  return "?";
}

// The dtype called `name` (as DTypeName spells it), or nullopt.
constexpr std::optional<DType> DTypeFromName(std::string_view name) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                      DType::kInt64, DType::kInt32, DType::kInt16, DType::kInt8,
                      DType::kUInt8, DType::kBool}) {
    if (DTypeName(dtype) == name) return dtype;
  }
  return std::nullopt;
}

// The dtype of the C++ element type T (float16 has none).
template <typename T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t> ||
                    std::is_same_v<T, int16_t> || std::is_same_v<T, int8_t> ||
                    std::is_same_v<T, uint8_t> || std::is_same_v<T, bool>,
                "no DType for this element type");
  return DType::kFloat32;
}

}  // namespace sluice

#endif  // SLUICE_ENGINE_DTYPE_H_
