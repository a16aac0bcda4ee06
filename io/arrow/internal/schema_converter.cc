// ConvertSchema: flatbuffer Schema -> io::arrow::Schema, refusing every type
// and feature sluice does not read.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/arrow/internal/ipc_format.h"

namespace sluice::io::arrow::internal {
namespace {

absl::Status Unsupported(const std::string& file, const std::string& path,
                         absl::string_view feature) {
  return absl::UnimplementedError(absl::StrCat(
      file, ": column '", path, "': ", feature, " is not supported"));
}

// The feature name of an unsupported member of the Type union.
const char* UnsupportedTypeName(fb::Type type) {
  switch (type) {
    case fb::Type_NONE:
      return "a field without a type";
    case fb::Type_Null:
      return "the null type";
    case fb::Type_Decimal:
      return "the decimal type";
    case fb::Type_Date:
      return "the date type";
    case fb::Type_Time:
      return "the time type";
    case fb::Type_Timestamp:
      return "the timestamp type";
    case fb::Type_Interval:
      return "the interval type";
    case fb::Type_Duration:
      return "the duration type";
    case fb::Type_Union:
      return "the union type";
    case fb::Type_FixedSizeBinary:
      return "the fixed_size_binary type";
    case fb::Type_Map:
      return "the map type";
    case fb::Type_RunEndEncoded:
      return "the run-end encoded type";
    case fb::Type_BinaryView:
      return "the binary view type";
    case fb::Type_Utf8View:
      return "the string view type";
    case fb::Type_ListView:
      return "the list view type";
    case fb::Type_LargeListView:
      return "the large list view type";
    default:
      return "an unknown type";
  }
}

absl::StatusOr<TypeId> IntType(const fb::Int* type, const std::string& file,
                               const std::string& path) {
  const bool is_signed = type->is_signed();
  switch (type->bitWidth()) {
    case 8:
      return is_signed ? TypeId::kInt8 : TypeId::kUInt8;
    case 16:
      return is_signed ? TypeId::kInt16 : TypeId::kUInt16;
    case 32:
      return is_signed ? TypeId::kInt32 : TypeId::kUInt32;
    case 64:
      return is_signed ? TypeId::kInt64 : TypeId::kUInt64;
    default:
      return Unsupported(file, path,
                         absl::StrCat("an int of ", type->bitWidth(), " bits"));
  }
}

absl::StatusOr<Field> ConvertField(const fb::Field* field,
                                   const std::string& file,
                                   const std::string& parent_path, int depth,
                                   const IpcLimits& limits) {
  if (field == nullptr) {
    return absl::DataLossError(absl::StrCat(file, ": a field is missing"));
  }
  Field result;
  if (field->name() != nullptr) result.name = field->name()->str();
  result.nullable = field->nullable();
  const std::string path = parent_path.empty()
                               ? result.name
                               : absl::StrCat(parent_path, ".", result.name);
  if (depth > limits.max_nesting_depth) {
    return absl::ResourceExhaustedError(absl::StrCat(
        file, ": column '", path, "' is nested deeper than ",
        limits.max_nesting_depth, " levels (IpcLimits::max_nesting_depth)"));
  }
  if (field->dictionary() != nullptr) {
    return Unsupported(file, path, "dictionary encoding");
  }
  if (field->type_type() != fb::Type_NONE && field->type() == nullptr) {
    return absl::DataLossError(absl::StrCat(file, ": column '", path,
                                            "': the type's table is missing"));
  }
  size_t expected_children = 0;
  switch (field->type_type()) {
    case fb::Type_Int: {
      absl::StatusOr<TypeId> type = IntType(field->type_as_Int(), file, path);
      if (!type.ok()) return type.status();
      result.type = *type;
      break;
    }
    case fb::Type_FloatingPoint:
      switch (field->type_as_FloatingPoint()->precision()) {
        case fb::Precision_HALF:
          result.type = TypeId::kFloat16;
          break;
        case fb::Precision_SINGLE:
          result.type = TypeId::kFloat32;
          break;
        case fb::Precision_DOUBLE:
          result.type = TypeId::kFloat64;
          break;
        default:
          return Unsupported(file, path, "an unknown float precision");
      }
      break;
    case fb::Type_Bool:
      result.type = TypeId::kBool;
      break;
    case fb::Type_Binary:
      result.type = TypeId::kBinary;
      break;
    case fb::Type_LargeBinary:
      result.type = TypeId::kLargeBinary;
      break;
    case fb::Type_Utf8:
      result.type = TypeId::kUtf8;
      break;
    case fb::Type_LargeUtf8:
      result.type = TypeId::kLargeUtf8;
      break;
    case fb::Type_List:
      result.type = TypeId::kList;
      expected_children = 1;
      break;
    case fb::Type_LargeList:
      result.type = TypeId::kLargeList;
      expected_children = 1;
      break;
    case fb::Type_FixedSizeList:
      result.type = TypeId::kFixedSizeList;
      result.list_size = field->type_as_FixedSizeList()->listSize();
      if (result.list_size < 0) {
        return absl::DataLossError(absl::StrCat(file, ": column '", path,
                                                "': negative list size ",
                                                result.list_size));
      }
      expected_children = 1;
      break;
    case fb::Type_Struct_:
      result.type = TypeId::kStruct;
      expected_children =
          field->children() == nullptr ? 0 : field->children()->size();
      break;
    default:
      return Unsupported(file, path, UnsupportedTypeName(field->type_type()));
  }
  const size_t children =
      field->children() == nullptr ? 0 : field->children()->size();
  if (children != expected_children) {
    return absl::DataLossError(absl::StrCat(
        file, ": column '", path, "': ", std::string(TypeName(result.type)),
        " has ", children, " children, expected ", expected_children));
  }
  for (size_t i = 0; i < children; ++i) {
    absl::StatusOr<Field> child =
        ConvertField(field->children()->Get(i), file, path, depth + 1, limits);
    if (!child.ok()) return child.status();
    result.children.push_back(*std::move(child));
  }
  return result;
}

}  // namespace

absl::StatusOr<Schema> ConvertSchema(const fb::Schema* schema,
                                     const std::string& file,
                                     const IpcLimits& limits) {
  if (schema == nullptr) {
    return absl::DataLossError(absl::StrCat(file, ": the schema is missing"));
  }
  if (schema->endianness() != fb::Endianness_Little) {
    return absl::UnimplementedError(absl::StrCat(
        file, ": big-endian data (schema endianness) is not supported"));
  }
  Schema result;
  if (schema->fields() == nullptr) return result;
  for (const fb::Field* field : *schema->fields()) {
    absl::StatusOr<Field> converted =
        ConvertField(field, file, /*parent_path=*/"", /*depth=*/1, limits);
    if (!converted.ok()) return converted.status();
    result.fields.push_back(*std::move(converted));
  }
  return result;
}

}  // namespace sluice::io::arrow::internal
