#include "tests/stages/generic/arrow_source_test_data.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <utility>

#include "gtest/gtest.h"
#include "io/arrow/arrow_file_writer.h"

namespace sluice::arrow_source_testing {

int64_t BlobSize(int64_t i) { return i % 100 == 6 ? 30 : i % 7; }
float VecValue(int64_t i, int k) { return static_cast<float>(i) + 0.5f * k; }

void WriteArrowFile(const std::string& path, int64_t first, int64_t rows,
                    int64_t batch_rows, Nulls nulls,
                    std::vector<std::string> names) {
  absl::StatusOr<std::unique_ptr<io::arrow::ArrowFileWriter>> writer =
      io::arrow::ArrowFileWriter::Create(
          path, {io::arrow::BinaryColumn(names[0]),
                 io::arrow::Float32VectorColumn(names[1], 4),
                 io::arrow::Int64Column(names[2])});
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int64_t start = 0; start < rows; start += batch_rows) {
    const int64_t n = std::min(batch_rows, rows - start);
    std::vector<int32_t> offsets = {0};
    std::vector<std::byte> bytes;
    std::vector<float> vec;
    std::vector<int64_t> labels;
    std::vector<uint8_t> blob_valid((n + 7) / 8, 0xff);
    std::vector<uint8_t> label_valid((n + 7) / 8, 0xff);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t i = first + start + r;
      bytes.insert(bytes.end(), BlobSize(i), static_cast<std::byte>(i & 255));
      offsets.push_back(static_cast<int32_t>(bytes.size()));
      for (int k = 0; k < 4; ++k) vec.push_back(VecValue(i, k));
      labels.push_back(10 * i);
      if (start + r == nulls.blob_row) blob_valid[r / 8] &= ~(1u << (r % 8));
      if (start + r == nulls.label_row) label_valid[r / 8] &= ~(1u << (r % 8));
    }
    ASSERT_TRUE(
        (*writer)
            ->WriteRecordBatch(
                n,
                {{.validity = blob_valid, .offsets = offsets, .bytes = bytes},
                 {.float32 = vec},
                 {.validity = label_valid, .int64 = labels}})
            .ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
}

void WriteDataset(const testing::TempDir& dir) {
  int64_t first = 0;
  int n = 0;
  for (int64_t rows : kRows) {
    WriteArrowFile(dir / ("part-" + std::to_string(n++) + ".arrow"), first,
                   rows, /*batch_rows=*/3);
    first += rows;
  }
}

std::string RowsConfig(const std::string& dir, const std::string& mode,
                       uint64_t seed, bool io_uring, const std::string& extra) {
  return "worker_threads: 2 metrics_interval_seconds: 0.02 seed: " +
         std::to_string(seed) + (io_uring ? "" : " use_io_uring: false") +
         " stage { name: 'files' file_path_provider { directory: '" + dir +
         "' mode: ONCE } }"
         " stage { name: 'rows' input: 'files' arrow_source { mode: " +
         mode +
         " column { name: 'blob' } column { name: 'vec' }"
         " column { name: 'label' field: 'y' } " +
         extra + " } }";
}

std::optional<Example> NextExample(DataLoader& loader) {
  auto result = loader.GetNextFor<Example>("", std::chrono::seconds(60));
  EXPECT_NE(result.kind, Channel<Example>::GetResult::Kind::kTimeout);
  return std::move(result.item);
}

int64_t Int64(const Example& example, const std::string& name) {
  const ExampleField* field = example.Find(name);
  EXPECT_NE(field, nullptr) << name;
  return field == nullptr ? -1 : field->scalar<int64_t>();
}

void ExpectRowValues(const Example& example) {
  const int64_t i = Int64(example, "index");
  EXPECT_EQ(Int64(example, "y"), 10 * i);
  const ExampleField* blob = example.Find("blob");
  ASSERT_NE(blob, nullptr);
  EXPECT_EQ(blob->dtype(), DType::kUInt8);
  ASSERT_EQ(blob->shape(), std::vector<int64_t>{BlobSize(i)});
  for (std::byte b : blob->bytes()) EXPECT_EQ(std::to_integer<int>(b), i & 255);
  const ExampleField* vec = example.Find("vec");
  ASSERT_NE(vec, nullptr);
  EXPECT_EQ(vec->dtype(), DType::kFloat32);
  ASSERT_EQ(vec->shape(), std::vector<int64_t>{4});
  for (int k = 0; k < 4; ++k) EXPECT_EQ(vec->data<float>()[k], VecValue(i, k));
}

std::vector<int64_t> EvalIndexes(DataLoader& loader) {
  std::vector<int64_t> indexes;
  while (std::optional<Example> example = NextExample(loader)) {
    ExpectRowValues(*example);
    EXPECT_EQ(Int64(*example, "seed"), 0);
    indexes.push_back(Int64(*example, "index"));
  }
  return indexes;
}

std::vector<int64_t> IndexesUpTo(int64_t count) {
  std::vector<int64_t> indexes(count);
  std::iota(indexes.begin(), indexes.end(), 0);
  return indexes;
}

uint64_t Skips(const StageMetricProto& metrics, const std::string& reason) {
  for (const SkipCountProto& skip : metrics.skipped()) {
    if (skip.reason() == reason) return skip.count();
  }
  return 0;
}

}  // namespace sluice::arrow_source_testing
