// A test-only Arrow IPC writer that builds files byte by byte, so tests can
// make what the reference writer (apache-arrow JS) cannot or will not:
// unsupported features (compression, big-endian, unions, ...) and every
// kind of damage (lengths, offsets, counts overridden at will).
//
//   TestSchema schema{.fields = {Int32Field("x")}};
//   TestBatch batch{.length = 2, .nodes = {{2, 0}},
//                   .buffers = {{}, {Values<int32_t>({1, 2})}}};
//   std::string stream = MakeStream(schema, {batch});
//   std::string file = MakeFile(schema, {batch});
#ifndef SLUICE_TESTS_IO_ARROW_IPC_TEST_WRITER_H_
#define SLUICE_TESTS_IO_ARROW_IPC_TEST_WRITER_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "io/arrow/internal/arrow_ipc_generated.h"

namespace sluice::io::arrow::testing {

namespace fb = ::org::apache::arrow::flatbuf;

// A field of the schema: any member of the Type union (tables other than
// Int, FloatingPoint and FixedSizeList are written without fields).
struct TestField {
  std::string name;
  fb::Type type = fb::Type_Int;
  int bit_width = 32;                              // Int
  bool is_signed = true;                           // Int
  fb::Precision precision = fb::Precision_SINGLE;  // FloatingPoint
  int32_t list_size = 0;                           // FixedSizeList
  bool dictionary = false;  // adds a DictionaryEncoding (int32 indices)
  bool nullable = true;
  std::vector<TestField> children;
};

TestField Int32Field(std::string name);
TestField Utf8Field(std::string name);

struct TestSchema {
  std::vector<TestField> fields;
  bool big_endian = false;
};

// One buffer of a batch body; offset / length override what the writer
// would put in the metadata.
struct TestBuffer {
  std::string bytes;
  std::optional<int64_t> offset;
  std::optional<int64_t> length;
};

struct TestBatch {
  int64_t length = 0;
  // (length, null_count) per field node, in pre-order.
  std::vector<std::pair<int64_t, int64_t>> nodes;
  std::vector<TestBuffer> buffers;
  // Adds a BodyCompression (LZ4_FRAME) to the metadata.
  bool compressed = false;
  // Writes a DictionaryBatch (id 0) wrapping this batch instead.
  bool dictionary_batch = false;
  // Overrides the message's bodyLength.
  std::optional<int64_t> body_length;
};

struct StreamOptions {
  // The pre-0.15 prefix: int32 length without the 0xFFFFFFFF marker.
  bool legacy_prefix = false;
  // Writes the end-of-stream marker at the end.
  bool end_marker = true;
};

// An IPC stream: the schema message, then one message per batch.
std::string MakeStream(const TestSchema& schema,
                       const std::vector<TestBatch>& batches,
                       StreamOptions options = {});

struct FileOptions {
  // Overrides the offset of every record batch block in the footer.
  std::optional<int64_t> block_offset;
};

// An IPC file: magic, the stream, the footer, its length, magic.
std::string MakeFile(const TestSchema& schema,
                     const std::vector<TestBatch>& batches,
                     FileOptions options = {});

// Little-endian bytes of `values`.
template <typename T>
std::string Values(std::initializer_list<T> values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  size_t at = 0;
  for (T value : values) {
    std::memcpy(bytes.data() + at, &value, sizeof(T));
    at += sizeof(T);
  }
  return bytes;
}

// An LSB-first bitmap of `bits`.
std::string Bitmap(std::initializer_list<bool> bits);

}  // namespace sluice::io::arrow::testing

#endif  // SLUICE_TESTS_IO_ARROW_IPC_TEST_WRITER_H_
