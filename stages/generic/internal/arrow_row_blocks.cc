#include "stages/generic/internal/arrow_row_blocks.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace sluice {
namespace {

using io::arrow::ArrayView;
using io::arrow::RecordBatch;
using io::arrow::TypeId;
using Kind = ArrowColumnPlan::Kind;

// One planned column of the batch being cut.
struct ColumnCursor {
  const ArrowColumnPlan* plan = nullptr;
  std::vector<const ArrayView*> chain;
  const ArrayView* array = nullptr;  // chain.back()
  // Binary, list or large_list: rows may differ in length.
  bool variable = false;
  // Some row of the chain (or a list's element) is null.
  bool has_nulls = false;
  size_t width = 0;  // bytes per element (kList, kScalar)
};

// Scalars that are widened to int64 on the way out.
bool IsWidened(TypeId type) {
  return type == TypeId::kUInt16 || type == TypeId::kUInt32;
}

// Elements of row `row`'s value (variable and fixed lists, binary).
int64_t ValueLength(const ColumnCursor& column, int64_t row) {
  if (column.plan->kind == Kind::kBytes) {
    return static_cast<int64_t>(column.array->Binary(row).size());
  }
  const auto [begin, end] = column.array->ListRange(row);
  return end - begin;
}

// Why the per-row output would skip `row` for this column, or "".
std::string_view RowProblem(const ColumnCursor& column, int64_t row,
                            uint64_t max_value_bytes) {
  for (const ArrayView* array : column.chain) {
    if (array->IsNull(row)) return "null_value";
  }
  if (column.plan->kind == Kind::kList && column.has_nulls) {
    const auto [begin, end] = column.array->ListRange(row);
    const ArrayView& values = column.array->child(0);
    for (int64_t i = begin; i < end; ++i) {
      if (values.IsNull(i)) return "null_value";
    }
  }
  if (max_value_bytes > 0 &&
      (column.plan->kind == Kind::kBytes || column.plan->kind == Kind::kList)) {
    const uint64_t bytes =
        static_cast<uint64_t>(ValueLength(column, row)) *
        (column.plan->kind == Kind::kList ? column.width : 1);
    if (bytes > max_value_bytes) return "value_too_large";
  }
  return {};
}

// The memory of one block: the record batch its views point into and the
// values converted for it.
struct BlockMemory {
  std::shared_ptr<const RecordBatch> batch;
  // int64 words (8-byte aligned), left uninitialized: every byte a column
  // reads is written first.
  std::unique_ptr<int64_t[]> converted;
};

// Rows [begin, end) of one column: a view into the batch, or converted
// into `out` (which has room for it).
BlockColumn ColumnOfRun(const ColumnCursor& column, int64_t begin, int64_t end,
                        std::byte* out) {
  const ArrowColumnPlan& plan = *column.plan;
  BlockColumn block{.name = plan.field, .dtype = plan.dtype};
  const ArrayView& array = *column.array;
  switch (plan.kind) {
    case Kind::kBytes: {
      const std::span<const std::byte> first = array.Binary(begin);
      block.example_shape = {static_cast<int64_t>(first.size())};
      block.example_bytes = first.size();
      block.data = first.data();
      break;
    }
    case Kind::kList: {
      const auto [first, last] = array.ListRange(begin);
      block.example_shape = {last - first};
      block.example_bytes = static_cast<size_t>(last - first) * column.width;
      block.data = array.child(0).values_bytes().data() + first * column.width;
      break;
    }
    case Kind::kBool:
      block.example_bytes = 1;
      for (int64_t row = begin; row < end; ++row) {
        out[row - begin] = std::byte{array.Bool(row) ? uint8_t{1} : uint8_t{0}};
      }
      block.data = out;
      break;
    case Kind::kScalar:
      if (IsWidened(plan.type)) {
        block.example_bytes = sizeof(int64_t);
        for (int64_t row = begin; row < end; ++row) {
          const int64_t value = plan.type == TypeId::kUInt16
                                    ? array.Value<uint16_t>(row)
                                    : array.Value<uint32_t>(row);
          std::memcpy(out + (row - begin) * sizeof(int64_t), &value,
                      sizeof(value));
        }
        block.data = out;
      } else {
        block.example_bytes = column.width;
        block.data = array.values_bytes().data() + begin * column.width;
      }
      break;
  }
  return block;
}

// Bytes a column converts for a run of `rows` (0 for views).
size_t ConvertedBytes(const ColumnCursor& column, int64_t rows) {
  if (column.plan->kind == Kind::kBool) return rows;
  if (column.plan->kind == Kind::kScalar && IsWidened(column.plan->type)) {
    return rows * sizeof(int64_t);
  }
  return 0;
}

size_t RoundUpToWord(size_t bytes) { return (bytes + 7) / 8 * 8; }

ExampleBlock MakeBlock(const std::shared_ptr<const RecordBatch>& batch,
                       const std::vector<ColumnCursor>& columns, int64_t begin,
                       int64_t end, const RowBlockOptions& options) {
  const int64_t rows = end - begin;
  size_t bytes = 2 * rows * sizeof(int64_t);  // index and seed
  for (const ColumnCursor& column : columns) {
    bytes += RoundUpToWord(ConvertedBytes(column, rows));
  }
  auto memory = std::make_shared<BlockMemory>();
  memory->batch = batch;
  memory->converted = std::make_unique_for_overwrite<int64_t[]>(bytes / 8);
  std::byte* out = reinterpret_cast<std::byte*>(memory->converted.get());
  std::vector<BlockColumn> block_columns;
  block_columns.reserve(columns.size() + 2);
  for (const ColumnCursor& column : columns) {
    block_columns.push_back(ColumnOfRun(column, begin, end, out));
    out += RoundUpToWord(ConvertedBytes(column, rows));
  }
  int64_t* index = reinterpret_cast<int64_t*>(out);
  int64_t* seed = index + rows;
  for (int64_t i = 0; i < rows; ++i) {
    index[i] = options.first_index + begin + i;
    seed[i] = options.train
                  ? static_cast<int64_t>(options.pass_seed +
                                         static_cast<uint64_t>(index[i]))
                  : 0;
  }
  for (auto [name, data] :
       {std::pair{kArrowIndexField, index}, std::pair{kArrowSeedField, seed}}) {
    block_columns.push_back(
        BlockColumn{.name = std::string(name),
                    .dtype = DType::kInt64,
                    .example_bytes = sizeof(int64_t),
                    .data = reinterpret_cast<const std::byte*>(data)});
  }
  ExampleBlock block(rows, std::move(block_columns), std::move(memory));
  ExampleOrigin origin = options.origin;
  origin.ref.index += static_cast<uint32_t>(begin);
  origin.cursor.ordinal += static_cast<uint32_t>(begin);
  block.set_origin(origin);
  return block;
}

}  // namespace

void AppendRowBlocks(std::shared_ptr<const RecordBatch> batch, int64_t begin,
                     int64_t end, std::span<const ArrowColumnPlan> plans,
                     const RowBlockOptions& options,
                     const RowSkipFunction& skip,
                     std::vector<ExampleBlock>& out) {
  std::vector<ColumnCursor> columns;
  bool per_row_checks = false;
  for (const ArrowColumnPlan& plan : plans) {
    ColumnCursor column{.plan = &plan, .chain = ColumnChain(*batch, plan)};
    column.array = column.chain.back();
    for (const ArrayView* array : column.chain) {
      column.has_nulls |= array->null_count() > 0;
    }
    if (plan.kind == Kind::kList) {
      column.has_nulls |= column.array->child(0).null_count() > 0;
      column.width = DTypeSize(plan.dtype);
      column.variable = column.array->type() != TypeId::kFixedSizeList;
    } else if (plan.kind == Kind::kScalar) {
      column.width = DTypeSize(plan.dtype);
      if (IsWidened(plan.type)) {
        column.width = plan.type == TypeId::kUInt16 ? 2 : 4;
      }
    }
    column.variable |= plan.kind == Kind::kBytes;
    const bool fixed_list_too_large =
        plan.kind == Kind::kList && !column.variable &&
        options.max_value_bytes > 0 &&
        static_cast<uint64_t>(column.array->list_size()) * column.width >
            options.max_value_bytes;
    per_row_checks |=
        column.has_nulls || column.variable || fixed_list_too_large;
    columns.push_back(std::move(column));
  }
  if (end <= begin) return;
  if (!per_row_checks) {
    out.push_back(MakeBlock(batch, columns, begin, end, options));
    return;
  }
  // Runs of good rows with equal value lengths.
  int64_t start = -1;
  std::vector<int64_t> run_lengths(columns.size());
  std::vector<int64_t> lengths(columns.size());
  const auto flush = [&](int64_t stop) {
    if (start >= 0 && stop > start) {
      out.push_back(MakeBlock(batch, columns, start, stop, options));
    }
    start = -1;
  };
  for (int64_t row = begin; row < end; ++row) {
    const ArrowColumnPlan* fault = nullptr;
    std::string_view problem;
    for (const ColumnCursor& column : columns) {
      problem = RowProblem(column, row, options.max_value_bytes);
      if (!problem.empty()) {
        fault = column.plan;
        break;
      }
    }
    if (fault != nullptr) {
      flush(row);
      skip(problem, *fault, row);
      continue;
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      lengths[c] = columns[c].variable ? ValueLength(columns[c], row) : 0;
    }
    if (start >= 0 && lengths != run_lengths) flush(row);
    if (start < 0) {
      start = row;
      run_lengths = lengths;
    }
  }
  flush(end);
}

}  // namespace sluice
