// Arrow IPC parsing of damaged files built by hand: every kind of damaged
// batch and framing is refused as data loss naming the file, and every
// truncation and byte flip of a good file ends cleanly.
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/arrow/ipc_bytes.h"
#include "tests/io/arrow/ipc_test_batches.h"
#include "tests/io/arrow/ipc_test_writer.h"

namespace sluice::io::arrow {
namespace {

using testing::ExpectError;
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
using testing::TouchEverything;
using testing::Utf8Batch;
using testing::Utf8Field;
using testing::Values;
namespace fb = testing::fb;

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

}  // namespace
}  // namespace sluice::io::arrow
