// Arrow IPC parsing of files built by hand (tests/io/arrow/ipc_test_writer):
// shapes the reference writer does not make, every refused feature by name,
// and the limits. Damage: arrow_ipc_damage_test.cc; the async readers:
// arrow_async_reader_test.cc.
#include <cctype>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "io/arrow/ipc_bytes.h"
#include "tests/io/arrow/ipc_test_batches.h"
#include "tests/io/arrow/ipc_test_writer.h"

namespace sluice::io::arrow {
namespace {

using testing::ExpectError;
using testing::ExpectMixed;
using testing::Int32Batch;
using testing::Int32Field;
using testing::kName;
using testing::MakeFile;
using testing::MakeStream;
using testing::MixedBatch;
using testing::MixedSchema;
using testing::Parse;
using testing::TestBatch;
using testing::TestField;
using testing::TestSchema;
using testing::Utf8Field;
using testing::fb::Type;
namespace fb = testing::fb;

TEST(ArrowIpcTest, ReadsFileStreamAndLegacyStream) {
  const std::vector<TestBatch> batches = {MixedBatch(), MixedBatch()};
  for (const std::string& bytes :
       {MakeFile(MixedSchema(), batches), MakeStream(MixedSchema(), batches),
        MakeStream(MixedSchema(), batches,
                   {.legacy_prefix = true, .end_marker = false})}) {
    absl::StatusOr<IpcContents> contents = Parse(bytes);
    ASSERT_TRUE(contents.ok()) << contents.status();
    ExpectMixed(*contents, 2);
  }
}

TEST(ArrowIpcTest, ReadsFromUnalignedBytes) {
  // Metadata is verified from an aligned copy; values are read with memcpy.
  const std::string stream = MakeStream(MixedSchema(), {MixedBatch()});
  const std::string shifted = "x" + stream;
  absl::StatusOr<IpcContents> contents =
      ReadIpcBytes(std::as_bytes(std::span(shifted)).subspan(1), kName);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ExpectMixed(*contents, 1);
}

TEST(ArrowIpcTest, EmptyColumnMayOmitItsBuffers) {
  TestBatch empty{.length = 0, .nodes = {{0, 0}}, .buffers = {{}, {}, {}}};
  absl::StatusOr<IpcContents> contents =
      Parse(MakeStream({.fields = {Utf8Field("s")}}, {empty}));
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->batches.size(), 1u);
  EXPECT_EQ(contents->batches[0].num_rows(), 0);
}

// Each unsupported member of the Type union, nested in a struct, is refused
// naming the nested column's path and the feature.
class UnsupportedTypeTest
    : public ::testing::TestWithParam<std::tuple<Type, const char*>> {};

TEST_P(UnsupportedTypeTest, RefusedWithColumnAndFeature) {
  const auto [type, feature] = GetParam();
  TestField inner{.name = "inner", .type = type};
  TestSchema schema{
      .fields = {
          Int32Field("ok"),
          {.name = "outer", .type = fb::Type_Struct_, .children = {inner}}}};
  for (const std::string& bytes :
       {MakeStream(schema, {}), MakeFile(schema, {})}) {
    ExpectError(Parse(bytes).status(), absl::StatusCode::kUnimplemented,
                {kName, "column 'outer.inner'", feature});
  }
}

INSTANTIATE_TEST_SUITE_P(
    Types, UnsupportedTypeTest,
    ::testing::Values(
        std::make_tuple(fb::Type_Null, "null type"),
        std::make_tuple(fb::Type_Decimal, "decimal"),
        std::make_tuple(fb::Type_Date, "date"),
        std::make_tuple(fb::Type_Time, "time"),
        std::make_tuple(fb::Type_Timestamp, "timestamp"),
        std::make_tuple(fb::Type_Interval, "interval"),
        std::make_tuple(fb::Type_Duration, "duration"),
        std::make_tuple(fb::Type_Union, "union"),
        std::make_tuple(fb::Type_FixedSizeBinary, "fixed_size_binary"),
        std::make_tuple(fb::Type_Map, "map"),
        std::make_tuple(fb::Type_RunEndEncoded, "run-end encoded"),
        std::make_tuple(fb::Type_BinaryView, "binary view"),
        std::make_tuple(fb::Type_Utf8View, "string view"),
        std::make_tuple(fb::Type_ListView, "list view"),
        std::make_tuple(fb::Type_LargeListView, "large list view"),
        std::make_tuple(fb::Type_NONE, "without a type")),
    [](const auto& info) {
      // The feature's words in CamelCase: "run-end encoded" -> RunEndEncoded.
      std::string name;
      bool upper = true;
      for (const char c : std::string(std::get<1>(info.param))) {
        if (!std::isalnum(static_cast<unsigned char>(c))) {
          upper = true;
          continue;
        }
        name += upper ? static_cast<char>(std::toupper(c)) : c;
        upper = false;
      }
      return name;
    });

TEST(ArrowIpcTest, RefusesOtherFeaturesByName) {
  TestField dictionary = Utf8Field("label");
  dictionary.dictionary = true;
  ExpectError(Parse(MakeStream({.fields = {dictionary}}, {})).status(),
              absl::StatusCode::kUnimplemented,
              {kName, "column 'label'", "dictionary encoding"});

  TestField wide{.name = "wide", .type = fb::Type_Int, .bit_width = 128};
  ExpectError(Parse(MakeStream({.fields = {wide}}, {})).status(),
              absl::StatusCode::kUnimplemented,
              {kName, "column 'wide'", "128 bits"});

  ExpectError(
      Parse(MakeFile({.fields = {Int32Field("x")}, .big_endian = true}, {}))
          .status(),
      absl::StatusCode::kUnimplemented, {kName, "big-endian"});

  TestBatch compressed = Int32Batch();
  compressed.compressed = true;
  ExpectError(
      Parse(MakeFile({.fields = {Int32Field("x")}}, {compressed})).status(),
      absl::StatusCode::kUnimplemented,
      {kName, "buffer compression", "LZ4_FRAME"});

  TestBatch dictionary_batch = Int32Batch();
  dictionary_batch.dictionary_batch = true;
  ExpectError(
      Parse(MakeStream({.fields = {Int32Field("x")}}, {dictionary_batch}))
          .status(),
      absl::StatusCode::kUnimplemented, {kName, "dictionary batches"});
}

TEST(ArrowIpcTest, EnforcesLimits) {
  const TestSchema schema{.fields = {Int32Field("x")}};
  for (const std::string& bytes :
       {MakeStream(schema, {Int32Batch()}), MakeFile(schema, {Int32Batch()})}) {
    ExpectError(Parse(bytes, {.max_metadata_bytes = 32}).status(),
                absl::StatusCode::kResourceExhausted,
                {kName, "max_metadata_bytes"});
    ExpectError(Parse(bytes, {.max_body_bytes = 8}).status(),
                absl::StatusCode::kResourceExhausted,
                {kName, "max_body_bytes"});
  }
  TestField deep = Int32Field("leaf");
  for (int i = 0; i < 20; ++i) {
    deep = TestField{.name = "s", .type = fb::Type_Struct_, .children = {deep}};
  }
  ExpectError(Parse(MakeStream({.fields = {deep}}, {})).status(),
              absl::StatusCode::kResourceExhausted,
              {kName, "max_nesting_depth"});
}

}  // namespace
}  // namespace sluice::io::arrow
