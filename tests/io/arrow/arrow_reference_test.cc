// Reads the files apache-arrow (JavaScript) wrote with
// write_reference_files.mjs back with sluice, through every path (bytes in
// memory, ArrowFileReader / ArrowStreamReader on io_uring and on the pread
// fallback), and checks every value against expected.json.
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "io/arrow/ipc_bytes.h"
#include "nlohmann/json.hpp"
#include "tests/io/arrow/async_reads.h"

namespace sluice::io::arrow {
namespace {

using ::nlohmann::json;
using testing::AsyncReadResult;
using testing::IpcFormat;
using testing::ReadAllAsync;

const std::string kDir = SLUICE_ARROW_REFERENCE_DIR;

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::span<const std::byte> AsBytes(const std::string& bytes) {
  return std::as_bytes(std::span(bytes));
}

// Checks row `row` of `array` against `expected` (expected.json's encoding).
void ExpectValue(const ArrayView& array, int64_t row, const json& expected,
                 const std::string& where) {
  SCOPED_TRACE(where + " row " + std::to_string(row));
  if (expected.is_null()) {
    EXPECT_TRUE(array.IsNull(row));
    return;
  }
  ASSERT_FALSE(array.IsNull(row));
  switch (array.type()) {
    case TypeId::kBool:
      EXPECT_EQ(array.Bool(row), expected.get<bool>());
      break;
    case TypeId::kInt8:
      EXPECT_EQ(array.Value<int8_t>(row), expected.get<int64_t>());
      break;
    case TypeId::kInt16:
      EXPECT_EQ(array.Value<int16_t>(row), expected.get<int64_t>());
      break;
    case TypeId::kInt32:
      EXPECT_EQ(array.Value<int32_t>(row), expected.get<int64_t>());
      break;
    case TypeId::kInt64:
      EXPECT_EQ(std::to_string(array.Value<int64_t>(row)),
                expected.get<std::string>());
      break;
    case TypeId::kUInt8:
      EXPECT_EQ(array.Value<uint8_t>(row), expected.get<int64_t>());
      break;
    case TypeId::kUInt16:
      EXPECT_EQ(array.Value<uint16_t>(row), expected.get<int64_t>());
      break;
    case TypeId::kUInt32:
      EXPECT_EQ(array.Value<uint32_t>(row), expected.get<int64_t>());
      break;
    case TypeId::kUInt64:
      EXPECT_EQ(std::to_string(array.Value<uint64_t>(row)),
                expected.get<std::string>());
      break;
    case TypeId::kFloat16:
      EXPECT_EQ(array.Float16(row), expected.get<double>());
      break;
    case TypeId::kFloat32:
      EXPECT_EQ(array.Value<float>(row), expected.get<double>());
      break;
    case TypeId::kFloat64:
      EXPECT_EQ(array.Value<double>(row), expected.get<double>());
      break;
    case TypeId::kBinary:
    case TypeId::kLargeBinary: {
      std::vector<int> bytes;
      for (std::byte byte : array.Binary(row)) {
        bytes.push_back(std::to_integer<int>(byte));
      }
      EXPECT_EQ(bytes, expected.get<std::vector<int>>());
      break;
    }
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
      EXPECT_EQ(array.String(row), expected.get<std::string>());
      break;
    case TypeId::kList:
    case TypeId::kLargeList:
    case TypeId::kFixedSizeList: {
      const auto [begin, end] = array.ListRange(row);
      ASSERT_EQ(end - begin, static_cast<int64_t>(expected.size()));
      for (int64_t i = begin; i < end; ++i) {
        ExpectValue(array.child(0), i, expected[i - begin], where + "[]");
      }
      break;
    }
    case TypeId::kStruct:
      ASSERT_EQ(array.num_children(), 2u);  // the audio struct
      ExpectValue(array.child(0), row, expected["bytes"], where + ".bytes");
      ExpectValue(array.child(1), row, expected["path"], where + ".path");
      break;
  }
}

void ExpectReference(const IpcContents& contents) {
  const json expected = json::parse(ReadWhole(kDir + "/expected.json"));
  const Schema& schema = contents.schema;
  ASSERT_EQ(schema.fields.size(), expected["columns"].size());
  const std::vector<int64_t> batch_rows = expected["batch_rows"];
  ASSERT_EQ(contents.batches.size(), batch_rows.size());
  EXPECT_EQ(schema.fields[schema.FieldIndex("fsl")].list_size, 3);
  EXPECT_EQ(schema.fields[schema.FieldIndex("audio")].children[1].name, "path");
  for (const auto& [name, values] : expected["columns"].items()) {
    const int column = schema.FieldIndex(name);
    ASSERT_GE(column, 0) << name;
    int64_t global_row = 0;
    for (size_t b = 0; b < contents.batches.size(); ++b) {
      const RecordBatch& batch = contents.batches[b];
      ASSERT_EQ(batch.num_rows(), batch_rows[b]);
      const ArrayView& array = batch.column(column);
      EXPECT_EQ(array.type(), schema.fields[column].type);
      for (int64_t row = 0; row < batch.num_rows(); ++row) {
        ExpectValue(array, row, values[global_row++], name);
      }
    }
    EXPECT_EQ(global_row, static_cast<int64_t>(values.size()));
  }
  // The type mapping, spot-checked.
  EXPECT_EQ(schema.fields[schema.FieldIndex("f16")].type, TypeId::kFloat16);
  EXPECT_EQ(schema.fields[schema.FieldIndex("large_text")].type,
            TypeId::kLargeUtf8);
  EXPECT_EQ(schema.fields[schema.FieldIndex("large_list")].type,
            TypeId::kLargeList);
}

TEST(ArrowReferenceTest, FileFromBytes) {
  const std::string bytes = ReadWhole(kDir + "/reference.arrow");
  absl::StatusOr<IpcContents> contents = ReadIpcBytes(AsBytes(bytes), "ref");
  ASSERT_TRUE(contents.ok()) << contents.status();
  ExpectReference(*contents);
}

TEST(ArrowReferenceTest, StreamFromBytes) {
  const std::string bytes = ReadWhole(kDir + "/reference.arrows");
  absl::StatusOr<IpcContents> contents = ReadIpcBytes(AsBytes(bytes), "ref");
  ASSERT_TRUE(contents.ok()) << contents.status();
  ExpectReference(*contents);
}

// (format, use io_uring)
class ArrowReferenceAsyncTest
    : public ::testing::TestWithParam<std::tuple<IpcFormat, bool>> {};

TEST_P(ArrowReferenceAsyncTest, EveryValueMatches) {
  const auto [format, use_io_uring] = GetParam();
  const std::string path =
      kDir +
      (format == IpcFormat::kFile ? "/reference.arrow" : "/reference.arrows");
  const AsyncReadResult result = ReadAllAsync(path, format, use_io_uring);
  if (use_io_uring && !result.used_io_uring) {
    GTEST_SKIP() << "io_uring is not available here";
  }
  ASSERT_TRUE(result.status.ok()) << result.status;
  ExpectReference(result.contents);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, ArrowReferenceAsyncTest,
    ::testing::Combine(::testing::Values(IpcFormat::kFile, IpcFormat::kStream),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == IpcFormat::kFile
                             ? "File"
                             : "Stream") +
             (std::get<1>(info.param) ? "IoUring" : "PreadThreads");
    });

// Files the JavaScript library writes with a feature sluice refuses: the
// error names the file, the column and the feature.
class ArrowReferenceRefusalTest
    : public ::testing::TestWithParam<
          std::tuple<const char*, const char*, const char*>> {};

TEST_P(ArrowReferenceRefusalTest, RefusedByName) {
  const auto [file, column, feature] = GetParam();
  const std::string bytes = ReadWhole(kDir + "/" + file);
  ASSERT_FALSE(bytes.empty());
  absl::StatusOr<IpcContents> contents = ReadIpcBytes(AsBytes(bytes), file);
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().code(), absl::StatusCode::kUnimplemented);
  const std::string message(contents.status().message());
  EXPECT_NE(message.find(file), std::string::npos) << message;
  EXPECT_NE(message.find(std::string("column '") + column + "'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(feature), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Features, ArrowReferenceRefusalTest,
    ::testing::Values(std::make_tuple("dictionary.arrows", "label",
                                      "dictionary encoding"),
                      std::make_tuple("timestamp.arrows", "when", "timestamp"),
                      std::make_tuple("decimal.arrows", "price", "decimal")),
    [](const auto& info) { return std::string(std::get<1>(info.param)); });

}  // namespace
}  // namespace sluice::io::arrow
