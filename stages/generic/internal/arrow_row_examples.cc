#include "stages/generic/internal/arrow_row_examples.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>

namespace sluice {

using io::arrow::ArrayView;
using io::arrow::TypeId;

namespace {

// A scalar field of row `row` of `array`, of Arrow type `type`.
ExampleField ScalarField(const ArrayView& array, TypeId type, int64_t row) {
  switch (type) {
    case TypeId::kInt8:
      return ExampleField::Scalar(array.Value<int8_t>(row));
    case TypeId::kInt16:
      return ExampleField::Scalar(array.Value<int16_t>(row));
    case TypeId::kInt32:
      return ExampleField::Scalar(array.Value<int32_t>(row));
    case TypeId::kUInt8:
      return ExampleField::Scalar(array.Value<uint8_t>(row));
    case TypeId::kUInt16:
      return ExampleField::Scalar<int64_t>(array.Value<uint16_t>(row));
    case TypeId::kUInt32:
      return ExampleField::Scalar<int64_t>(array.Value<uint32_t>(row));
    case TypeId::kFloat16: {
      const uint16_t bits = array.Value<uint16_t>(row);
      return ExampleField::OwnedBytes(DType::kFloat16, {},
                                      std::as_bytes(std::span(&bits, 1)));
    }
    case TypeId::kFloat32:
      return ExampleField::Scalar(array.Value<float>(row));
    case TypeId::kFloat64:
      return ExampleField::Scalar(array.Value<double>(row));
    default:
      return ExampleField::Scalar(array.Value<int64_t>(row));
  }
}

}  // namespace

std::optional<Example> MakeRowExample(
    const ArrowLoadedBatch& loaded,
    const std::vector<std::vector<const ArrayView*>>& chains, int64_t r,
    const RowExampleOptions& options, const RowSkipFunction& skip_row,
    const std::shared_ptr<const void>& keep_alive) {
  const bool train = options.train;
  const uint64_t max_bytes = options.max_value_bytes;
  const ArrowDatasetFile& file = *loaded.file;
  Example example;
  example.Reserve(file.plan.size() + 2);  // the columns, index, seed
  std::string_view skip;
  const ArrowColumnPlan* skipped = nullptr;
  for (size_t c = 0; c < file.plan.size() && skip.empty(); ++c) {
    const ArrowColumnPlan& plan = file.plan[c];
    const std::vector<const ArrayView*>& chain = chains[c];
    if (std::any_of(chain.begin(), chain.end(),
                    [r](const ArrayView* a) { return a->IsNull(r); })) {
      skip = "null_value";
      skipped = &plan;
      break;
    }
    const ArrayView& array = *chain.back();
    switch (plan.kind) {
      case ArrowColumnPlan::Kind::kBytes: {
        const std::span<const std::byte> value = array.Binary(r);
        if (max_bytes > 0 && value.size() > max_bytes) {
          skip = "value_too_large";
          skipped = &plan;
          break;
        }
        example.Set(plan.field,
                    ExampleField::View(DType::kUInt8,
                                       {static_cast<int64_t>(value.size())},
                                       value, keep_alive));
        break;
      }
      case ArrowColumnPlan::Kind::kList: {
        const auto [begin, end] = array.ListRange(r);
        const ArrayView& values = array.child(0);
        if (values.null_count() > 0) {
          for (int64_t i = begin; i < end; ++i) {
            if (values.IsNull(i)) {
              skip = "null_value";
              skipped = &plan;
              break;
            }
          }
          if (!skip.empty()) break;
        }
        const size_t width = DTypeSize(plan.dtype);
        const std::span<const std::byte> bytes =
            values.values_bytes().subspan(begin * width, (end - begin) * width);
        if (max_bytes > 0 && bytes.size() > max_bytes) {
          skip = "value_too_large";
          skipped = &plan;
          break;
        }
        example.Set(plan.field, ExampleField::View(plan.dtype, {end - begin},
                                                   bytes, keep_alive));
        break;
      }
      case ArrowColumnPlan::Kind::kBool:
        example.Set(plan.field, ExampleField::Scalar(array.Bool(r)));
        break;
      case ArrowColumnPlan::Kind::kScalar:
        example.Set(plan.field, ScalarField(array, plan.type, r));
        break;
    }
  }
  if (!skip.empty()) {
    skip_row(skip, *skipped, r);
    return std::nullopt;
  }
  const int64_t file_row = loaded.first_row + r;
  const int64_t index = file.offset + file_row;
  const uint64_t seed =
      train ? loaded.pass_seed + static_cast<uint64_t>(index) : 0;
  static const FieldName index_field(kArrowIndexField);
  static const FieldName seed_field(kArrowSeedField);
  example.Set(index_field, ExampleField::Scalar(index));
  example.Set(seed_field, ExampleField::Scalar(static_cast<int64_t>(seed)));
  example.set_origin({.ref = {.unit = loaded.read.pass << 32 | file.number,
                              .index = static_cast<uint32_t>(file_row)},
                      .cursor = {.position = loaded.read.position,
                                 .ordinal = static_cast<uint32_t>(file_row)},
                      .restored = loaded.only_rows.has_value()});
  return example;
}

std::shared_ptr<const void> HoldForRows(const ArrowLoadedBatch& loaded) {
  return std::make_shared<const std::shared_ptr<const io::arrow::RecordBatch>>(
      loaded.batch);
}

}  // namespace sluice
