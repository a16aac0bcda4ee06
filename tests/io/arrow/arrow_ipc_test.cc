// Arrow IPC reading on files built by hand (tests/io/arrow/ipc_test_writer):
// shapes the reference writer does not make, every refused feature, every
// kind of damage, limits, and the async readers on both backends.
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/arrow_stream_reader.h"
#include "io/arrow/ipc_bytes.h"
#include "tests/io/arrow/async_reads.h"
#include "tests/io/arrow/ipc_test_writer.h"

namespace sluice::io::arrow {
namespace {

using testing::Bitmap;
using testing::Int32Field;
using testing::IpcFormat;
using testing::MakeFile;
using testing::MakeStream;
using testing::ReadAllAsync;
using testing::TestBatch;
using testing::TestField;
using testing::TestSchema;
using testing::Utf8Field;
using testing::Values;
using testing::fb::Type;
namespace fb = testing::fb;

constexpr char kName[] = "hand.arrow";

absl::StatusOr<IpcContents> Parse(const std::string& bytes,
                                  const IpcLimits& limits = {}) {
  return ReadIpcBytes(std::as_bytes(std::span(bytes)), kName, limits);
}

// Asserts `status` has `code` and a message holding every one of `parts`.
void ExpectError(const absl::Status& status, absl::StatusCode code,
                 std::initializer_list<std::string> parts) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), absl::string_view::npos)
        << "'" << part << "' not in: " << status;
  }
}

// x: int32, s: utf8, st: struct<a: float64, l: list<item: uint8>>,
// fsl: fixed_size_list<item: int16, 2>.
TestSchema MixedSchema() {
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
TestBatch MixedBatch() {
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
TestBatch Int32Batch() {
  return {
      .length = 3,
      .nodes = {{3, 1}},
      .buffers = {{Bitmap({true, false, true})}, {Values<int32_t>({7, 0, 9})}}};
}

// One utf8 column "s" with the given offsets over "abc".
TestBatch Utf8Batch(std::initializer_list<int32_t> offsets) {
  const int64_t rows = static_cast<int64_t>(offsets.size()) - 1;
  return {.length = rows,
          .nodes = {{rows, 0}},
          .buffers = {{""}, {Values<int32_t>(offsets)}, {"abc"}}};
}

void ExpectMixed(const IpcContents& contents, size_t batches) {
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

// A damaged batch of one column `field`: (what to break, expected message).
struct Damage {
  const char* name;
  TestField field;
  TestBatch batch;
  const char* message;
};

void PrintTo(const Damage& damage, std::ostream* out) { *out << damage.name; }

class DamagedBatchTest : public ::testing::TestWithParam<Damage> {};

TEST_P(DamagedBatchTest, RefusedAsDataLoss) {
  const Damage& damage = GetParam();
  const TestSchema schema{.fields = {damage.field}};
  for (const std::string& bytes :
       {MakeStream(schema, {damage.batch}), MakeFile(schema, {damage.batch})}) {
    ExpectError(Parse(bytes).status(), absl::StatusCode::kDataLoss,
                {kName, damage.message});
  }
}

Damage WithBatch(const char* name, TestField field, TestBatch batch,
                 const char* message) {
  return {name, std::move(field), std::move(batch), message};
}

TestBatch Modified(TestBatch batch, auto change) {
  change(batch);
  return batch;
}

INSTANTIATE_TEST_SUITE_P(
    Damages, DamagedBatchTest,
    ::testing::Values(
        WithBatch("BufferPastBody", Int32Field("x"),
                  Modified(Int32Batch(),
                           [](TestBatch& b) { b.buffers[1].offset = 4096; }),
                  "lies outside the body"),
        WithBatch("NegativeBufferLength", Int32Field("x"),
                  Modified(Int32Batch(),
                           [](TestBatch& b) { b.buffers[1].length = -4; }),
                  "lies outside the body"),
        WithBatch("NegativeBufferOffset", Int32Field("x"),
                  Modified(Int32Batch(),
                           [](TestBatch& b) { b.buffers[0].offset = -8; }),
                  "lies outside the body"),
        WithBatch("NegativeNodeLength", Int32Field("x"),
                  Modified(Int32Batch(),
                           [](TestBatch& b) {
                             b.nodes[0] = {-1, 0};
                           }),
                  "invalid length -1"),
        WithBatch("NullCountAboveLength", Int32Field("x"),
                  Modified(Int32Batch(),
                           [](TestBatch& b) {
                             b.nodes[0] = {3, 4};
                           }),
                  "null count 4"),
        WithBatch("NullsWithoutBitmap", Int32Field("x"),
                  Modified(Int32Batch(),
                           [](TestBatch& b) { b.buffers[0].bytes = ""; }),
                  "validity bitmap"),
        WithBatch("ShortValues", Int32Field("x"),
                  Modified(Int32Batch(),
                           [](TestBatch& b) { b.buffers[1].length = 8; }),
                  "values buffer"),
        WithBatch("ColumnShorterThanBatch", Int32Field("x"),
                  Modified(Int32Batch(), [](TestBatch& b) { b.length = 5; }),
                  "has 3 rows"),
        WithBatch("TooFewNodes", Int32Field("x"),
                  Modified(Int32Batch(), [](TestBatch& b) { b.nodes = {}; }),
                  "too few field nodes"),
        WithBatch("TooFewBuffers", Int32Field("x"),
                  Modified(Int32Batch(),
                           [](TestBatch& b) { b.buffers.pop_back(); }),
                  "too few buffers"),
        WithBatch("ExtraBuffers", Int32Field("x"),
                  Modified(Int32Batch(),
                           [](TestBatch& b) { b.buffers.push_back({"x"}); }),
                  "3 buffers"),
        WithBatch("NegativeBatchLength", Int32Field("x"),
                  Modified(Int32Batch(), [](TestBatch& b) { b.length = -3; }),
                  "negative record batch length"),
        WithBatch("OffsetPastData", Utf8Field("s"), Utf8Batch({0, 2, 9}),
                  "offset 9 of row 2"),
        WithBatch("OffsetsOutOfOrder", Utf8Field("s"), Utf8Batch({0, 3, 1}),
                  "out of order"),
        WithBatch("NegativeFirstOffset", Utf8Field("s"), Utf8Batch({-1, 2}),
                  "offset -1 of row 0"),
        WithBatch("ShortOffsets", Utf8Field("s"),
                  Modified(Utf8Batch({0, 1, 2}),
                           [](TestBatch& b) { b.buffers[1].length = 8; }),
                  "offsets buffer"),
        WithBatch("ListOffsetPastChild",
                  TestField{.name = "l",
                            .type = fb::Type_List,
                            .children = {Int32Field("item")}},
                  TestBatch{.length = 1,
                            .nodes = {{1, 0}, {2, 0}},
                            .buffers = {{""},
                                        {Values<int32_t>({0, 3})},
                                        {""},
                                        {Values<int32_t>({1, 2})}}},
                  "offset 3 of row 1"),
        WithBatch("FixedSizeListChildTooShort",
                  TestField{.name = "f",
                            .type = fb::Type_FixedSizeList,
                            .list_size = 3,
                            .children = {Int32Field("item")}},
                  TestBatch{.length = 2,
                            .nodes = {{2, 0}, {5, 0}},
                            .buffers = {{""},
                                        {""},
                                        {Values<int32_t>({1, 2, 3, 4, 5})}}},
                  "too few for 2"),
        WithBatch("StructChildTooShort",
                  TestField{.name = "st",
                            .type = fb::Type_Struct_,
                            .children = {Int32Field("a")}},
                  TestBatch{.length = 2,
                            .nodes = {{2, 0}, {1, 0}},
                            .buffers = {{""}, {""}, {Values<int32_t>({1})}}},
                  "child 'a' has 1 rows")),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ArrowIpcTest, RefusesDamagedFraming) {
  const TestSchema schema{.fields = {Int32Field("x")}};
  const std::string file = MakeFile(schema, {Int32Batch()});

  ExpectError(Parse(file.substr(0, file.size() - 1)).status(),
              absl::StatusCode::kDataLoss, {kName, "no ARROW1 magic"});
  ExpectError(Parse("ARROW1\0\0" + std::string(4, '\0')).status(),
              absl::StatusCode::kDataLoss, {kName, "too short"});

  std::string footer_too_long = file;
  const int32_t huge = 1 << 20;
  std::memcpy(footer_too_long.data() + file.size() - 10, &huge, 4);
  ExpectError(Parse(footer_too_long).status(), absl::StatusCode::kDataLoss,
              {kName, "runs past the start"});

  std::string negative_footer = file;
  const int32_t negative = -16;
  std::memcpy(negative_footer.data() + file.size() - 10, &negative, 4);
  ExpectError(Parse(negative_footer).status(), absl::StatusCode::kDataLoss,
              {kName, "footer length -16"});

  ExpectError(
      Parse(MakeFile(schema, {Int32Batch()}, {.block_offset = 1LL << 40}))
          .status(),
      absl::StatusCode::kDataLoss, {kName, "runs past the footer"});
  ExpectError(
      Parse(MakeFile(schema, {Int32Batch()}, {.block_offset = 8})).status(),
      absl::StatusCode::kDataLoss, {kName});

  // A stream: negative metadata length, truncated body, body overrun.
  std::string negative_metadata("\xff\xff\xff\xff\xf8\xff\xff\xff", 8);
  ExpectError(Parse(negative_metadata).status(), absl::StatusCode::kDataLoss,
              {kName, "negative message metadata length"});
  const std::string stream =
      MakeStream(schema, {Int32Batch()}, {.end_marker = false});
  ExpectError(Parse(stream.substr(0, stream.size() - 3)).status(),
              absl::StatusCode::kDataLoss, {kName, "truncated message body"});
  TestBatch long_body = Int32Batch();
  long_body.body_length = 1 << 20;
  ExpectError(Parse(MakeStream(schema, {long_body})).status(),
              absl::StatusCode::kDataLoss, {kName, "truncated message body"});
  ExpectError(
      Parse(std::string("\x10\0\0\0", 4) + std::string(16, '\x07')).status(),
      absl::StatusCode::kDataLoss,
      {kName, "not a valid Arrow Message flatbuffer"});
  ExpectError(Parse("").status(), absl::StatusCode::kDataLoss,
              {kName, "truncated message prefix"});
  ExpectError(Parse(std::string("\xff\xff\xff\xff\0\0\0\0", 8)).status(),
              absl::StatusCode::kDataLoss, {kName, "ends before its schema"});
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

// Reads every value of every column, so ASan sees any view that points
// outside its bytes. Returns a checksum to keep the reads.
uint64_t TouchEverything(const ArrayView& array) {
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

TEST(ArrowIpcTest, EveryTruncationAndByteFlipEndsCleanly) {
  const std::vector<TestBatch> batches = {MixedBatch(), MixedBatch()};
  const std::string file = MakeFile(MixedSchema(), batches);
  const std::string stream = MakeStream(MixedSchema(), batches);
  for (size_t size = 0; size < file.size(); ++size) {
    EXPECT_FALSE(Parse(file.substr(0, size)).ok()) << size;
  }
  int errors = 0;
  uint64_t checksum = 0;
  for (const std::string* original : {&file, &stream}) {
    for (size_t at = 0; at < original->size(); ++at) {
      for (const char flip : {'\x01', '\x80', '\xff'}) {
        std::string damaged = *original;
        damaged[at] = static_cast<char>(damaged[at] ^ flip);
        absl::StatusOr<IpcContents> contents = Parse(damaged);
        if (!contents.ok()) {
          ++errors;
          continue;
        }
        for (const RecordBatch& batch : contents->batches) {
          for (const ArrayView& column : batch.columns()) {
            checksum += TouchEverything(column);
          }
        }
      }
    }
  }
  // Most flips hit metadata or offsets and are caught; the rest decode.
  EXPECT_GT(errors, 0);
  EXPECT_GT(checksum, 0u);
}

// A temporary file holding `bytes`, removed at destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    char path[] = "/tmp/sluice_arrow_test_XXXXXX";
    const int fd = mkstemp(path);
    path_ = path;
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
    close(fd);
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class ArrowAsyncTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    asio::io_context io;
    AsyncFileReader reader(io, {.use_io_uring = GetParam()});
    if (GetParam() && !reader.uses_io_uring()) {
      GTEST_SKIP() << "io_uring is not available: " << reader.fallback_reason();
    }
  }
};

TEST_P(ArrowAsyncTest, FileAndStreamReadersReadEveryBatch) {
  const std::vector<TestBatch> batches = {MixedBatch(), MixedBatch(),
                                          MixedBatch()};
  const TempFile file(MakeFile(MixedSchema(), batches));
  const TempFile stream(MakeStream(
      MixedSchema(), batches, {.legacy_prefix = true, .end_marker = false}));
  for (const auto& [path, format] :
       {std::make_pair(file.path(), IpcFormat::kFile),
        std::make_pair(stream.path(), IpcFormat::kStream)}) {
    const testing::AsyncReadResult result =
        ReadAllAsync(path, format, GetParam());
    ASSERT_TRUE(result.status.ok()) << result.status;
    ExpectMixed(result.contents, 3);
  }
}

TEST_P(ArrowAsyncTest, RecyclesTheCallersBuffer) {
  const TempFile file(MakeFile(MixedSchema(), {MixedBatch(), MixedBatch()}));
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = GetParam()});
  sluice::testing::CoroutineRunner runner(io);
  runner.Spawn([&]() -> asio::awaitable<void> {
    absl::StatusOr<std::unique_ptr<ArrowFileReader>> arrow =
        co_await ArrowFileReader::Open(reader, file.path());
    EXPECT_TRUE(arrow.ok()) << arrow.status();
    if (!arrow.ok()) co_return;
    EXPECT_EQ((*arrow)->num_record_batches(), 2);
    std::vector<std::byte> buffer;
    buffer.reserve(1 << 16);
    const std::byte* storage = buffer.data();
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<RecordBatch> batch =
          co_await (*arrow)->ReadRecordBatch(i, std::move(buffer));
      EXPECT_TRUE(batch.ok()) << batch.status();
      if (!batch.ok()) co_return;
      EXPECT_EQ(batch->column(1).String(1), "abc");
      buffer = std::move(*batch).TakeBuffer();
      EXPECT_EQ(buffer.data(), storage);
    }
    absl::StatusOr<RecordBatch> missing = co_await (*arrow)->ReadRecordBatch(2);
    EXPECT_EQ(missing.status().code(), absl::StatusCode::kOutOfRange);
  });
  runner.RunToCompletion();
}

TEST_P(ArrowAsyncTest, ConcurrentReadsOfOneFile) {
  std::vector<TestBatch> batches;
  for (int i = 0; i < 8; ++i) batches.push_back(MixedBatch());
  const TempFile file(MakeFile(MixedSchema(), batches));
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = GetParam()});
  std::unique_ptr<ArrowFileReader> arrow;
  sluice::testing::CoroutineRunner opener(io);
  opener.Spawn([&]() -> asio::awaitable<void> {
    absl::StatusOr<std::unique_ptr<ArrowFileReader>> opened =
        co_await ArrowFileReader::Open(reader, file.path());
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (opened.ok()) arrow = *std::move(opened);
  });
  opener.RunToCompletion();
  ASSERT_NE(arrow, nullptr);
  io.restart();
  std::vector<int64_t> rows(batches.size(), -1);
  sluice::testing::CoroutineRunner runner(io);
  for (size_t i = 0; i < batches.size(); ++i) {
    runner.Spawn([&, i]() -> asio::awaitable<void> {
      absl::StatusOr<RecordBatch> batch =
          co_await arrow->ReadRecordBatch(static_cast<int>(i));
      EXPECT_TRUE(batch.ok()) << batch.status();
      if (batch.ok()) rows[i] = batch->num_rows();
    });
  }
  runner.RunToCompletion(/*threads=*/2);
  EXPECT_EQ(rows, std::vector<int64_t>(batches.size(), 2));
}

TEST_P(ArrowAsyncTest, ReportsDamageAndWrongFormats) {
  const TestSchema schema{.fields = {Int32Field("x")}};
  const std::string file_bytes = MakeFile(schema, {Int32Batch()});
  const TempFile truncated(file_bytes.substr(0, file_bytes.size() - 4));
  const std::string stream_bytes = MakeStream(schema, {Int32Batch()});
  const TempFile stream(stream_bytes);
  const TempFile truncated_stream(
      stream_bytes.substr(0, stream_bytes.size() - 12));
  const TempFile tiny("ARROW1");

  ExpectError(
      ReadAllAsync(truncated.path(), IpcFormat::kFile, GetParam()).status,
      absl::StatusCode::kDataLoss, {truncated.path(), "no ARROW1"});
  ExpectError(ReadAllAsync(stream.path(), IpcFormat::kFile, GetParam()).status,
              absl::StatusCode::kDataLoss,
              {stream.path(), "no ARROW1 magic at the start"});
  ExpectError(ReadAllAsync(tiny.path(), IpcFormat::kFile, GetParam()).status,
              absl::StatusCode::kDataLoss, {tiny.path(), "too short"});
  ExpectError(
      ReadAllAsync(truncated_stream.path(), IpcFormat::kStream, GetParam())
          .status,
      absl::StatusCode::kDataLoss, {truncated_stream.path(), "truncated"});
  ExpectError(ReadAllAsync(stream.path(), IpcFormat::kStream, GetParam(),
                           {.max_body_bytes = 4})
                  .status,
              absl::StatusCode::kResourceExhausted, {"max_body_bytes"});
  EXPECT_EQ(ReadAllAsync("/nonexistent/x.arrow", IpcFormat::kFile, GetParam())
                .status.code(),
            absl::StatusCode::kNotFound);
}

TEST_P(ArrowAsyncTest, StreamReaderRepeatsItsEndAndItsError) {
  const TestSchema schema{.fields = {Int32Field("x")}};
  TestBatch bad = Int32Batch();
  bad.nodes[0] = {3, 9};
  const TempFile good(MakeStream(schema, {Int32Batch()}));
  const TempFile damaged(MakeStream(schema, {Int32Batch(), bad}));
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = GetParam()});
  sluice::testing::CoroutineRunner runner(io);
  runner.Spawn([&]() -> asio::awaitable<void> {
    auto stream = co_await ArrowStreamReader::Open(reader, good.path());
    EXPECT_TRUE(stream.ok()) << stream.status();
    if (!stream.ok()) co_return;
    auto first = co_await (*stream)->Next();
    EXPECT_TRUE(first.ok() && first->has_value());
    for (int i = 0; i < 2; ++i) {
      auto end = co_await (*stream)->Next();
      EXPECT_TRUE(end.ok() && !end->has_value());
    }
    stream = co_await ArrowStreamReader::Open(reader, damaged.path());
    EXPECT_TRUE(stream.ok()) << stream.status();
    if (!stream.ok()) co_return;
    first = co_await (*stream)->Next();
    EXPECT_TRUE(first.ok() && first->has_value());
    for (int i = 0; i < 2; ++i) {
      auto error = co_await (*stream)->Next();
      EXPECT_EQ(error.status().code(), absl::StatusCode::kDataLoss);
      EXPECT_NE(error.status().message().find("null count 9"),
                absl::string_view::npos)
          << error.status();
    }
  });
  runner.RunToCompletion();
}

// SkipNext counts a batch's rows from its metadata and never decodes its
// body: a batch whose offsets run past its data (Next: DataLoss) counts
// like any other; it mixes with Next, and ends as Next ends.
TEST_P(ArrowAsyncTest, SkipNextCountsRowsFromTheMetadataAlone) {
  const TestSchema schema{.fields = {Utf8Field("s")}};
  const TempFile stream(MakeStream(
      schema,
      {Utf8Batch({0, 1, 99}), Utf8Batch({0, 1, 2, 3}), Utf8Batch({0, 3})}));
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = GetParam()});
  sluice::testing::CoroutineRunner runner(io);
  runner.Spawn([&]() -> asio::awaitable<void> {
    auto opened = co_await ArrowStreamReader::Open(reader, stream.path());
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (!opened.ok()) co_return;
    ArrowStreamReader& arrow = **opened;
    absl::StatusOr<std::optional<int64_t>> rows = co_await arrow.SkipNext();
    EXPECT_TRUE(rows.ok() && *rows == std::optional<int64_t>(2))
        << rows.status();
    absl::StatusOr<std::optional<RecordBatch>> batch = co_await arrow.Next();
    EXPECT_TRUE(batch.ok() && batch->has_value()) << batch.status();
    if (batch.ok() && batch->has_value()) {
      EXPECT_EQ((*batch)->num_rows(), 3);
      EXPECT_EQ((*batch)->column(0).String(2), "c");
    }
    rows = co_await arrow.SkipNext();
    EXPECT_TRUE(rows.ok() && *rows == std::optional<int64_t>(1))
        << rows.status();
    for (int i = 0; i < 2; ++i) {
      rows = co_await arrow.SkipNext();
      EXPECT_TRUE(rows.ok() && !rows->has_value()) << rows.status();
    }
    // The same first batch through Next is refused.
    opened = co_await ArrowStreamReader::Open(reader, stream.path());
    if (!opened.ok()) co_return;
    batch = co_await (*opened)->Next();
    EXPECT_EQ(batch.status().code(), absl::StatusCode::kDataLoss);
  });
  runner.RunToCompletion();
}

// What SkipNext can tell without the body it refuses as Next does: a
// compressed body, a dictionary batch, a body past the end of the file.
TEST_P(ArrowAsyncTest, SkipNextRefusesWhatTheMetadataShows) {
  const TestSchema schema{.fields = {Int32Field("x")}};
  TestBatch compressed = Int32Batch();
  compressed.compressed = true;
  TestBatch dictionary_batch = Int32Batch();
  dictionary_batch.dictionary_batch = true;
  const std::string whole = MakeStream(schema, {Int32Batch()});
  const TempFile compressed_file(MakeStream(schema, {compressed}));
  const TempFile dictionary_file(MakeStream(schema, {dictionary_batch}));
  const TempFile truncated_file(whole.substr(0, whole.size() - 12));
  const std::pair<const TempFile*, std::vector<std::string>> cases[] = {
      {&compressed_file, {"buffer compression", "LZ4_FRAME"}},
      {&dictionary_file, {"dictionary batches"}},
      {&truncated_file, {"truncated message body"}},
  };
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = GetParam()});
  sluice::testing::CoroutineRunner runner(io);
  runner.Spawn([&]() -> asio::awaitable<void> {
    for (const auto& [file, words] : cases) {
      auto opened = co_await ArrowStreamReader::Open(reader, file->path());
      EXPECT_TRUE(opened.ok()) << opened.status();
      if (!opened.ok()) continue;
      for (int i = 0; i < 2; ++i) {
        const absl::StatusOr<std::optional<int64_t>> rows =
            co_await (*opened)->SkipNext();
        EXPECT_FALSE(rows.ok()) << file->path();
        for (const std::string& word : words) {
          EXPECT_NE(rows.status().message().find(word), std::string::npos)
              << rows.status();
        }
        EXPECT_NE(rows.status().message().find(file->path()), std::string::npos)
            << rows.status();
      }
    }
  });
  runner.RunToCompletion();
}

// LocateColumns(columns) then ReadColumnRows(first_row, rows) of `path`
// on a fresh io_context; nullopt when LocateColumns declines.
absl::StatusOr<std::optional<RecordBatch>> ReadRows(const std::string& path,
                                                    bool use_io_uring,
                                                    std::vector<int> columns,
                                                    int64_t first_row,
                                                    int64_t rows) {
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = use_io_uring});
  sluice::testing::CoroutineRunner runner(io);
  absl::StatusOr<std::optional<RecordBatch>> result =
      absl::UnknownError("not run");
  runner.Spawn([&]() -> asio::awaitable<void> {
    absl::StatusOr<std::unique_ptr<ArrowFileReader>> arrow =
        co_await ArrowFileReader::Open(reader, path);
    if (!arrow.ok()) {
      result = arrow.status();
      co_return;
    }
    absl::StatusOr<std::optional<ArrowFileReader::ColumnLayout>> layout =
        co_await (*arrow)->LocateColumns(columns);
    if (!layout.ok()) {
      result = layout.status();
      co_return;
    }
    if (!layout->has_value()) {
      result = std::nullopt;
      co_return;
    }
    EXPECT_EQ((**layout).first_rows.size(),
              static_cast<size_t>((*arrow)->num_record_batches()) + 1);
    absl::StatusOr<RecordBatch> batch =
        co_await (*arrow)->ReadColumnRows(**layout, first_row, rows);
    if (batch.ok()) {
      result = *std::move(batch);
    } else {
      result = batch.status();
    }
  });
  runner.RunToCompletion();
  return result;
}

// The version ArrowFileReader::Open finds `path` at.
FileVersion VersionWhenOpened(const std::string& path) {
  asio::io_context io;
  AsyncFileReader reader(io, {});
  sluice::testing::CoroutineRunner runner(io);
  FileVersion version;
  runner.Spawn([&]() -> asio::awaitable<void> {
    absl::StatusOr<std::unique_ptr<ArrowFileReader>> arrow =
        co_await ArrowFileReader::Open(reader, path);
    EXPECT_TRUE(arrow.ok()) << arrow.status();
    if (arrow.ok()) version = (*arrow)->version();
  });
  runner.RunToCompletion();
  return version;
}

TEST(ArrowIpcTest, AFileKeepsItsVersionUntilWrittenOrReplaced) {
  const std::string bytes = MakeFile(MixedSchema(), {MixedBatch()});
  const TempFile file(bytes);
  const FileVersion first = VersionWhenOpened(file.path());
  EXPECT_EQ(first.size, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(VersionWhenOpened(file.path()), first);
  // Replaced by a file of the same bytes: another inode.
  const TempFile copy(bytes);
  ASSERT_EQ(rename(copy.path().c_str(), file.path().c_str()), 0);
  const FileVersion replaced = VersionWhenOpened(file.path());
  EXPECT_NE(replaced, first);
  // Written in place, the same inode: another size (and change time).
  const std::string longer =
      MakeFile(MixedSchema(), {MixedBatch(), MixedBatch()});
  const int fd = open(file.path().c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(write(fd, longer.data(), longer.size()),
            static_cast<ssize_t>(longer.size()));
  close(fd);
  const FileVersion written = VersionWhenOpened(file.path());
  EXPECT_EQ(written.inode, replaced.inode);
  EXPECT_NE(written, replaced);
}

TEST_P(ArrowAsyncTest, ColumnRowsJoinValuesAcrossRecordBatches) {
  // fsl (column 3) has no nulls: rows [1, 2], [3, 4] in the first two
  // batches, [5, 6], [7, 8] in the last.
  TestBatch last = MixedBatch();
  last.buffers[14] = {Values<int16_t>({5, 6, 7, 8})};
  const TempFile file(
      MakeFile(MixedSchema(), {MixedBatch(), MixedBatch(), last}));
  // Rows 1 to 4: the end of batch 0, all of batch 1, the start of batch 2.
  absl::StatusOr<std::optional<RecordBatch>> run =
      ReadRows(file.path(), GetParam(), {3}, 1, 4);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(run->has_value());
  const RecordBatch& batch = **run;
  ASSERT_EQ(batch.num_rows(), 4);
  const ArrayView& fsl = batch.column(3);
  EXPECT_EQ(fsl.type(), TypeId::kFixedSizeList);
  EXPECT_EQ(fsl.length(), 4);
  EXPECT_EQ(fsl.null_count(), 0);
  ASSERT_EQ(fsl.num_children(), 1u);
  std::vector<int16_t> values;
  for (int64_t i = 0; i < fsl.child(0).length(); ++i) {
    values.push_back(fsl.child(0).Value<int16_t>(i));
  }
  EXPECT_EQ(values, (std::vector<int16_t>{3, 4, 1, 2, 3, 4, 5, 6}));
  // The columns not asked for are empty.
  EXPECT_EQ(batch.column(0).length(), 0);
  EXPECT_EQ(batch.column(1).length(), 0);
}

TEST_P(ArrowAsyncTest, LocateColumnsDeclinesNullsAndRefusesOtherColumns) {
  const TempFile file(MakeFile(MixedSchema(), {MixedBatch(), MixedBatch()}));
  // x (column 0) has a null in row 1: read batch by batch instead.
  absl::StatusOr<std::optional<RecordBatch>> with_null =
      ReadRows(file.path(), GetParam(), {0, 3}, 0, 2);
  ASSERT_TRUE(with_null.ok()) << with_null.status();
  EXPECT_FALSE(with_null->has_value());
  // s is utf8: its rows are not of one size.
  ExpectError(ReadRows(file.path(), GetParam(), {1}, 0, 2).status(),
              absl::StatusCode::kInvalidArgument, {"fixed-size rows"});
  ExpectError(ReadRows(file.path(), GetParam(), {3}, 3, 2).status(),
              absl::StatusCode::kOutOfRange, {"no rows [3, +2)"});
}

TEST_P(ArrowAsyncTest, LocateColumnsRefusesDamagedBatches) {
  TestBatch short_values = MixedBatch();
  short_values.buffers[14] = {Values<int16_t>({1, 2, 3})};
  TestBatch past_body = MixedBatch();
  past_body.buffers[14].offset = 1 << 20;
  TestBatch wrong_length = MixedBatch();
  wrong_length.nodes[7] = {3, 0};
  TestBatch missing_node = MixedBatch();
  missing_node.nodes.pop_back();
  for (const auto& [batch, message] :
       {std::make_pair(short_values, "values buffer of 6 bytes"),
        std::make_pair(past_body, "lies outside the body"),
        std::make_pair(wrong_length, "has 3 values"),
        std::make_pair(missing_node, "7 field nodes")}) {
    const TempFile file(MakeFile(MixedSchema(), {MixedBatch(), batch}));
    ExpectError(ReadRows(file.path(), GetParam(), {3}, 0, 4).status(),
                absl::StatusCode::kDataLoss, {message});
  }
}

TEST_P(ArrowAsyncTest, ColumnRowsOfADamagedFileEndCleanly) {
  const std::string original =
      MakeFile(MixedSchema(), {MixedBatch(), MixedBatch(), MixedBatch()});
  int errors = 0;
  uint64_t checksum = 0;
  for (size_t at = 0; at < original.size(); ++at) {
    for (const char flip : {'\x01', '\xff'}) {
      std::string damaged = original;
      damaged[at] = static_cast<char>(damaged[at] ^ flip);
      const TempFile file(damaged);
      absl::StatusOr<std::optional<RecordBatch>> rows =
          ReadRows(file.path(), GetParam(), {3}, 1, 4);
      if (!rows.ok() || !rows->has_value()) {
        ++errors;
        continue;
      }
      for (const ArrayView& column : (*rows)->columns()) {
        checksum += TouchEverything(column);
      }
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_GT(checksum, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, ArrowAsyncTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "IoUring" : "PreadThreads";
                         });

}  // namespace
}  // namespace sluice::io::arrow
