// ArrowFileWriter: writes an Arrow IPC *file* (ARROW1 magic, schema,
// record batches, footer), little-endian and uncompressed. Only what sluice
// needs to make data for its own tools and tests: binary, utf8, int64,
// float32, fixed_size_list<float32> and struct columns (structs of any of
// these, nested), optional validity bitmaps, any number of record batches.
//
//   absl::StatusOr<std::unique_ptr<ArrowFileWriter>> writer =
//       ArrowFileWriter::Create(
//           "data-00001-of-00002.arrow",
//           {StructColumn("audio", {BinaryColumn("bytes"),
//                                   Utf8Column("path")}),
//            Int64Column("label"), Float32VectorColumn("embedding", 256)});
//   (*writer)->WriteRecordBatch(
//       rows, {{.children = {{.offsets = clip_offsets, .bytes = clips},
//                            {.offsets = path_offsets, .bytes = paths}}},
//              {.int64 = labels},
//              {.float32 = embeddings}});
//   absl::Status done = (*writer)->Finish();
//
// Promises: the file is written under a hidden temporary name beside `path`
// (".NAME.tmp") and renamed into place by Finish(), so directory watchers
// and readers never see half a file; a writer destroyed without Finish()
// removes its temporary file. Buffers are 8-byte aligned in the file.
// Synchronous (blocking writes): for tools and tests, not the event loop.
#ifndef SLUICE_IO_ARROW_ARROW_FILE_WRITER_H_
#define SLUICE_IO_ARROW_ARROW_FILE_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/arrow/schema.h"

namespace sluice::io::arrow {

// One column (or struct member) the writer can write: kBinary, kUtf8,
// kInt64, kFloat32, kFixedSizeList of float32 with `list_size` values per
// row, or kStruct of `children` (at least one). Every field is nullable.
struct WriterColumn {
  std::string name;
  TypeId type = TypeId::kInt64;
  int32_t list_size = 0;               // kFixedSizeList only
  std::vector<WriterColumn> children;  // kStruct only
};

WriterColumn BinaryColumn(std::string name);
WriterColumn Utf8Column(std::string name);
WriterColumn Int64Column(std::string name);
WriterColumn Float32Column(std::string name);
WriterColumn Float32VectorColumn(std::string name, int32_t list_size);
WriterColumn StructColumn(std::string name, std::vector<WriterColumn> children);

// The values of one column in one record batch of `rows` rows.
struct ColumnValues {
  // LSB-first validity bitmap of at least ceil(rows / 8) bytes; empty when
  // every row is valid.
  std::span<const uint8_t> validity;
  // kBinary, kUtf8: rows + 1 offsets into `bytes`, starting at 0.
  std::span<const int32_t> offsets;
  // kBinary, kUtf8: the values' bytes (utf8 is written as given, not
  // validated).
  std::span<const std::byte> bytes;
  // kInt64: `rows` values.
  std::span<const int64_t> int64;
  // kFloat32: `rows` values; kFixedSizeList: rows * list_size values.
  std::span<const float> float32;
  // kStruct: the members' values in schema order, `rows` rows each (a null
  // struct row still has a row in every member).
  std::vector<ColumnValues> children;
};

class ArrowFileWriter {
 public:
  // Opens the temporary file and writes the magic and the schema. An error
  // for an unsupported column type or an I/O failure (naming the path).
  static absl::StatusOr<std::unique_ptr<ArrowFileWriter>> Create(
      std::string path, std::vector<WriterColumn> columns);
  ~ArrowFileWriter();
  ArrowFileWriter(const ArrowFileWriter&) = delete;
  ArrowFileWriter& operator=(const ArrowFileWriter&) = delete;

  // Appends one record batch; `columns` in schema order. InvalidArgument
  // (naming the column, "audio.path" for a struct member) when a column's
  // values do not match `rows`; nothing is written then.
  absl::Status WriteRecordBatch(int64_t rows,
                                const std::vector<ColumnValues>& columns);

  // Writes the end-of-stream marker and the footer, closes the file and
  // renames it into place. Call once.
  absl::Status Finish();

  const std::string& path() const { return path_; }
  // Bytes written so far.
  int64_t bytes_written() const { return position_; }

 private:
  ArrowFileWriter(std::string path, std::string temp_path,
                  std::vector<WriterColumn> columns, std::FILE* file);
  absl::Status Write(std::span<const std::byte> bytes);
  absl::Status WriteMessage(std::span<const uint8_t> metadata,
                            std::span<const std::byte> body,
                            int64_t* metadata_bytes);

  struct Block {
    int64_t offset;
    int32_t metadata_bytes;
    int64_t body_bytes;
  };

  const std::string path_;
  const std::string temp_path_;
  const std::vector<WriterColumn> columns_;
  std::FILE* file_;
  int64_t position_ = 0;
  std::vector<Block> blocks_;
  std::vector<std::byte> body_;  // reused between batches
};

}  // namespace sluice::io::arrow

#endif  // SLUICE_IO_ARROW_ARROW_FILE_WRITER_H_
