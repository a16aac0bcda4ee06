#include "stages/generic/internal/arrow_column_plan.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/status_macros.h"

namespace sluice {

namespace arrow = io::arrow;
using arrow::TypeId;

namespace {

// The dtype of a scalar of `type`, or nullopt when it has none.
std::optional<DType> ScalarDType(TypeId type) {
  switch (type) {
    case TypeId::kInt8:
      return DType::kInt8;
    case TypeId::kInt16:
      return DType::kInt16;
    case TypeId::kInt32:
      return DType::kInt32;
    case TypeId::kInt64:
    case TypeId::kUInt16:  // widened
    case TypeId::kUInt32:  // widened
      return DType::kInt64;
    case TypeId::kUInt8:
      return DType::kUInt8;
    case TypeId::kFloat16:
      return DType::kFloat16;
    case TypeId::kFloat32:
      return DType::kFloat32;
    case TypeId::kFloat64:
      return DType::kFloat64;
    case TypeId::kBool:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

// The dtype of list values of `type` (viewed in place), or nullopt.
std::optional<DType> ListDType(TypeId type) {
  if (type == TypeId::kUInt16 || type == TypeId::kUInt32 ||
      type == TypeId::kBool) {
    return std::nullopt;
  }
  return ScalarDType(type);
}

// Resolves `column` (a name, or a dotted path through struct members)
// against `schema`. NotFound: missing_column; FailedPrecondition:
// unsupported_column_type.
absl::StatusOr<ArrowColumnPlan> PlanColumn(
    const arrow::Schema& schema, const ArrowSourceConfig::Column& column,
    const std::string& file) {
  using Plan = ArrowColumnPlan;
  Plan plan;
  plan.column = column.name();
  plan.field = FieldName(column.has_field() ? column.field() : column.name());
  const arrow::Field* field = nullptr;
  if (const int index = schema.FieldIndex(column.name()); index >= 0) {
    plan.path = {index};
    field = &schema.fields[index];
  } else {
    const std::vector<std::string> parts = absl::StrSplit(column.name(), '.');
    const std::vector<arrow::Field>* members = &schema.fields;
    for (const std::string& part : parts) {
      if (field != nullptr && field->type != TypeId::kStruct) {
        field = nullptr;
        break;
      }
      const auto it =
          std::find_if(members->begin(), members->end(),
                       [&](const arrow::Field& f) { return f.name == part; });
      if (it == members->end()) {
        field = nullptr;
        break;
      }
      plan.path.push_back(static_cast<int>(it - members->begin()));
      field = &*it;
      members = &field->children;
    }
  }
  if (field == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(file, ": no column '", column.name(), "'"));
  }
  const auto unsupported = [&](const arrow::Field& f) {
    return absl::FailedPreconditionError(
        absl::StrCat(file, ": column '", column.name(), "' has type ",
                     std::string(arrow::TypeName(f.type)),
                     ", which arrow_source cannot map"));
  };
  if (arrow::IsBinaryLike(field->type)) {
    plan.kind = Plan::Kind::kBytes;
    plan.type = field->type;
    plan.dtype = DType::kUInt8;
  } else if (field->type == TypeId::kList ||
             field->type == TypeId::kLargeList ||
             field->type == TypeId::kFixedSizeList) {
    const arrow::Field& child = field->children.at(0);
    const std::optional<DType> dtype = ListDType(child.type);
    if (!dtype) return unsupported(child);
    plan.kind = Plan::Kind::kList;
    plan.type = child.type;
    plan.dtype = *dtype;
  } else if (const std::optional<DType> dtype = ScalarDType(field->type)) {
    plan.kind =
        field->type == TypeId::kBool ? Plan::Kind::kBool : Plan::Kind::kScalar;
    plan.type = field->type;
    plan.dtype = *dtype;
  } else {
    return unsupported(*field);
  }
  return plan;
}

}  // namespace

absl::StatusOr<std::vector<ArrowColumnPlan>> PlanColumns(
    const arrow::Schema& schema, const ArrowSourceConfig& config,
    const std::string& file) {
  std::vector<ArrowColumnPlan> plans;
  for (const ArrowSourceConfig::Column& column : config.column()) {
    SLUICE_ASSIGN_OR_RETURN(ArrowColumnPlan plan,
                            PlanColumn(schema, column, file));
    plans.push_back(std::move(plan));
  }
  return plans;
}

bool SameColumns(const std::vector<ArrowColumnPlan>& a,
                 const std::vector<ArrowColumnPlan>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].path != b[i].path || a[i].type != b[i].type) return false;
  }
  return true;
}

std::vector<int> FixedRowColumns(const arrow::Schema& schema,
                                 const std::vector<ArrowColumnPlan>& plans) {
  std::vector<int> columns;
  for (const ArrowColumnPlan& plan : plans) {
    if (plan.path.size() != 1 ||
        arrow::FixedRowBytes(schema.fields[plan.path[0]]) == 0) {
      return {};
    }
    columns.push_back(plan.path[0]);
  }
  std::sort(columns.begin(), columns.end());
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
  return columns;
}

std::vector<const io::arrow::ArrayView*> ColumnChain(
    const io::arrow::RecordBatch& batch, const ArrowColumnPlan& plan) {
  std::vector<const io::arrow::ArrayView*> chain = {
      &batch.column(plan.path[0])};
  for (size_t i = 1; i < plan.path.size(); ++i) {
    chain.push_back(&chain.back()->child(plan.path[i]));
  }
  return chain;
}

}  // namespace sluice
