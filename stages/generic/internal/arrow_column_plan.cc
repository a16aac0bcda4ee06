#include "stages/generic/internal/arrow_column_plan.h"

namespace sluice {

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
