// What the Arrow IPC tests on hand-built files share: the file name they
// parse under, the schemas and batches they build (a mixed schema of
// nested types, int32 and utf8 batches), and the checks of an error and of
// the mixed batch's values.
//
//   ExpectMixed(*Parse(MakeFile(MixedSchema(), {MixedBatch()})), 1);
#ifndef SLUICE_TESTS_IO_ARROW_IPC_TEST_BATCHES_H_
#define SLUICE_TESTS_IO_ARROW_IPC_TEST_BATCHES_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "io/arrow/ipc_bytes.h"
#include "tests/io/arrow/ipc_test_writer.h"

namespace sluice::io::arrow::testing {

// The file name every hand-built file is parsed under (errors name it).
inline constexpr char kName[] = "hand.arrow";

// `bytes` parsed as an Arrow IPC file or stream called kName.
inline absl::StatusOr<IpcContents> Parse(const std::string& bytes,
                                         const IpcLimits& limits = {}) {
  return ReadIpcBytes(std::as_bytes(std::span(bytes)), kName, limits);
}

// Asserts `status` has `code` and a message holding every one of `parts`.
inline void ExpectError(const absl::Status& status, absl::StatusCode code,
                        std::initializer_list<std::string> parts) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), absl::string_view::npos)
        << "'" << part << "' not in: " << status;
  }
}

// x: int32, s: utf8, st: struct<a: float64, l: list<item: uint8>>,
// fsl: fixed_size_list<item: int16, 2>.
inline TestSchema MixedSchema() {
  TestField a{.name = "a",
              .type = fb::Type_FloatingPoint,
              .precision = fb::Precision_DOUBLE};
  TestField item8{
      .name = "item", .type = fb::Type_Int, .bit_width = 8, .is_signed = false};
  TestField list{.name = "l", .type = fb::Type_List, .children = {item8}};
  TestField st{.name = "st", .type = fb::Type_Struct_, .children = {a, list}};
  TestField item16{.name = "item", .type = fb::Type_Int, .bit_width = 16};
  TestField fsl{.name = "fsl",
                .type = fb::Type_FixedSizeList,
                .list_size = 2,
                .children = {item16}};
  return {.fields = {Int32Field("x"), Utf8Field("s"), st, fsl}};
}

// Two rows of MixedSchema: x = [5, null], s = ["hi", "abc"],
// st = [{1.5, [1]}, {-2, [2, 3]}], fsl = [[1, 2], [3, 4]].
inline TestBatch MixedBatch() {
  return {
      .length = 2,
      .nodes = {{2, 1}, {2, 0}, {2, 0}, {2, 0}, {2, 0}, {3, 0}, {2, 0}, {4, 0}},
      .buffers = {{Bitmap({true, false})},
                  {Values<int32_t>({5, 0})},
                  {""},
                  {Values<int32_t>({0, 2, 5})},
                  {"hiabc"},
                  {""},
                  {""},
                  {Values<double>({1.5, -2})},
                  {""},
                  {Values<int32_t>({0, 1, 3})},
                  {""},
                  {Values<uint8_t>({1, 2, 3})},
                  {""},
                  {""},
                  {Values<int16_t>({1, 2, 3, 4})}}};
}

// One int32 column "x" of three rows [7, null, 9].
inline TestBatch Int32Batch() {
  return {
      .length = 3,
      .nodes = {{3, 1}},
      .buffers = {{Bitmap({true, false, true})}, {Values<int32_t>({7, 0, 9})}}};
}

// One utf8 column "s" with the given offsets over "abc".
inline TestBatch Utf8Batch(std::initializer_list<int32_t> offsets) {
  const int64_t rows = static_cast<int64_t>(offsets.size()) - 1;
  return {.length = rows,
          .nodes = {{rows, 0}},
          .buffers = {{""}, {Values<int32_t>(offsets)}, {"abc"}}};
}

// Asserts `contents` holds MixedSchema and `batches` copies of MixedBatch.
inline void ExpectMixed(const IpcContents& contents, size_t batches) {
  ASSERT_EQ(contents.schema.fields.size(), 4u);
  EXPECT_EQ(contents.schema.fields[2].children[1].children[0].type,
            TypeId::kUInt8);
  ASSERT_EQ(contents.batches.size(), batches);
  for (const RecordBatch& batch : contents.batches) {
    ASSERT_EQ(batch.num_rows(), 2);
    const ArrayView& x = batch.column(0);
    EXPECT_FALSE(x.IsNull(0));
    EXPECT_EQ(x.Value<int32_t>(0), 5);
    EXPECT_TRUE(x.IsNull(1));
    EXPECT_EQ(batch.column(1).String(0), "hi");
    EXPECT_EQ(batch.column(1).String(1), "abc");
    const ArrayView& st = batch.column(2);
    EXPECT_EQ(st.child(0).Value<double>(1), -2.0);
    const ArrayView& list = st.child(1);
    EXPECT_EQ(list.ListRange(1), std::make_pair(int64_t{1}, int64_t{3}));
    EXPECT_EQ(list.child(0).Value<uint8_t>(2), 3);
    const ArrayView& fsl = batch.column(3);
    EXPECT_EQ(fsl.ListRange(1), std::make_pair(int64_t{2}, int64_t{4}));
    EXPECT_EQ(fsl.child(0).Value<int16_t>(3), 4);
  }
}

// Reads every value of every column, so ASan sees any view that points
// outside its bytes. Returns a checksum to keep the reads.
inline uint64_t TouchEverything(const ArrayView& array) {
  uint64_t sum = 0;
  for (int64_t row = 0; row < array.length(); ++row) {
    sum += array.IsNull(row);
    switch (array.type()) {
      case TypeId::kInt32:
        sum += array.Value<int32_t>(row);
        break;
      case TypeId::kUInt8:
        sum += array.Value<uint8_t>(row);
        break;
      case TypeId::kInt16:
        sum += array.Value<int16_t>(row);
        break;
      case TypeId::kFloat64:
        sum += array.Value<double>(row) > 0;
        break;
      case TypeId::kUtf8:
        sum += array.String(row).size();
        break;
      case TypeId::kList:
      case TypeId::kFixedSizeList: {
        const auto [begin, end] = array.ListRange(row);
        sum += end - begin;
        break;
      }
      default:
        break;
    }
  }
  for (size_t i = 0; i < array.num_children(); ++i) {
    sum += TouchEverything(array.child(i));
  }
  return sum;
}

}  // namespace sluice::io::arrow::testing

#endif  // SLUICE_TESTS_IO_ARROW_IPC_TEST_BATCHES_H_
