// ArrowColumnPlan: how one configured column of one Arrow file becomes an
// example field (arrow_source's survey makes one per column and file with
// PlanColumns; the row and row-block emitters follow it).
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_COLUMN_PLAN_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_COLUMN_PLAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/dtype.h"
#include "io/arrow/record_batch.h"
#include "io/arrow/schema.h"
#include "proto/data_loader_config.pb.h"
#include "stages/generic/example.h"

namespace sluice {

// The fields arrow_source sets on every row besides its columns: the row's
// place in the data set and its per-pass seed (int64 scalars).
inline constexpr std::string_view kArrowIndexField = "index";
inline constexpr std::string_view kArrowSeedField = "seed";

struct ArrowColumnPlan {
  // kBytes: binary/utf8 (and large_) as uint8 [n]; kScalar: a primitive
  // scalar; kBool: a bool scalar (bit-packed in Arrow); kList: list,
  // large_list or fixed_size_list of primitives as dtype [n].
  enum class Kind { kBytes, kScalar, kBool, kList };
  std::string column;     // as configured (for logs)
  FieldName field{""};    // example field name
  std::vector<int> path;  // top-level column, then struct member indexes
  Kind kind = Kind::kScalar;
  // The value's Arrow type (list: the child's).
  io::arrow::TypeId type = io::arrow::TypeId::kInt64;
  DType dtype = DType::kInt64;
};

// Called once per skipped row (null_value, value_too_large) with the plan
// of the column at fault and the row within the batch.
using RowSkipFunction = std::function<void(
    std::string_view reason, const ArrowColumnPlan& plan, int64_t row)>;

// The plans of the config's columns in a file of `schema` (`file` names it
// in errors). NotFound: a column is missing (missing_column);
// FailedPrecondition: a column's type cannot be mapped
// (unsupported_column_type).
absl::StatusOr<std::vector<ArrowColumnPlan>> PlanColumns(
    const io::arrow::Schema& schema, const ArrowSourceConfig& config,
    const std::string& file);

// Whether two plans of the same config read the same columns as the same
// types (a file's schema unchanged since its survey, for its columns).
bool SameColumns(const std::vector<ArrowColumnPlan>& a,
                 const std::vector<ArrowColumnPlan>& b);

// The top-level columns of `plans` (sorted, each once) when every planned
// column is a top-level column of fixed-size rows, which can be read in
// row blocks; else none.
std::vector<int> FixedRowColumns(const io::arrow::Schema& schema,
                                 const std::vector<ArrowColumnPlan>& plans);

// The arrays from the top-level column down to the planned value: a row is
// null when it is null in any of them.
std::vector<const io::arrow::ArrayView*> ColumnChain(
    const io::arrow::RecordBatch& batch, const ArrowColumnPlan& plan);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_COLUMN_PLAN_H_
