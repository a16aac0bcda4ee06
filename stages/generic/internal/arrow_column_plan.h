// ArrowColumnPlan: how one configured column of one Arrow file becomes an
// example field (arrow_source's survey makes one per column and file; the
// row and row-block emitters follow it).
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_COLUMN_PLAN_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_COLUMN_PLAN_H_

#include <string>
#include <vector>

#include "engine/dtype.h"
#include "io/arrow/record_batch.h"
#include "io/arrow/schema.h"

namespace sluice {

struct ArrowColumnPlan {
  // kBytes: binary/utf8 (and large_) as uint8 [n]; kScalar: a primitive
  // scalar; kBool: a bool scalar (bit-packed in Arrow); kList: list,
  // large_list or fixed_size_list of primitives as dtype [n].
  enum class Kind { kBytes, kScalar, kBool, kList };
  std::string column;     // as configured (for logs)
  std::string field;      // example field name
  std::vector<int> path;  // top-level column, then struct member indexes
  Kind kind = Kind::kScalar;
  // The value's Arrow type (list: the child's).
  io::arrow::TypeId type = io::arrow::TypeId::kInt64;
  DType dtype = DType::kInt64;
};

// The arrays from the top-level column down to the planned value: a row is
// null when it is null in any of them.
std::vector<const io::arrow::ArrayView*> ColumnChain(
    const io::arrow::RecordBatch& batch, const ArrowColumnPlan& plan);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_COLUMN_PLAN_H_
