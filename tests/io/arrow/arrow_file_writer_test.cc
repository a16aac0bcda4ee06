#include "io/arrow/arrow_file_writer.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/internal/read_only_file.h"
#include "io/arrow/ipc_bytes.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice::io::arrow {
namespace {

namespace fs = std::filesystem;

// A fresh directory removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "awriterXXXXXX");
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const {
    return (path_ / name).string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<std::byte> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data());
  return {data, data + bytes.size()};
}

std::vector<WriterColumn> SampleColumns() {
  return {BinaryColumn("blob"), Int64Column("label"),
          Float32VectorColumn("vec", 4)};
}

// Writes rows 0..9 in batches of 4, 3, 3 (the formula of
// read_written_file.mjs): blob null at 2, label null at 5, vec null at 7.
void WriteSample(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ArrowFileWriter>> writer =
      ArrowFileWriter::Create(path, SampleColumns());
  ASSERT_TRUE(writer.ok()) << writer.status();
  int64_t first = 0;
  for (int64_t rows : {4, 3, 3}) {
    std::vector<int32_t> offsets = {0};
    std::vector<std::byte> bytes;
    std::vector<int64_t> labels;
    std::vector<float> vec;
    std::vector<uint8_t> blob_valid(1, 0xff), label_valid(1, 0xff),
        vec_valid(1, 0xff);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = first + r;
      if (i != 2) {
        for (int64_t j = 0; j < i % 5; ++j) {
          bytes.push_back(static_cast<std::byte>((7 * i + j) & 255));
        }
      } else {
        blob_valid[0] &= ~(1u << r);
      }
      offsets.push_back(static_cast<int32_t>(bytes.size()));
      labels.push_back(i == 5 ? 0 : 3 * i - 5);
      if (i == 5) label_valid[0] &= ~(1u << r);
      for (float k : {0.f, .25f, .5f, .75f}) vec.push_back(i + k);
      if (i == 7) vec_valid[0] &= ~(1u << r);
    }
    const absl::Status status = (*writer)->WriteRecordBatch(
        rows, {{.validity = blob_valid, .offsets = offsets, .bytes = bytes},
               {.validity = label_valid, .int64 = labels},
               {.validity = vec_valid, .float32 = vec}});
    ASSERT_TRUE(status.ok()) << status;
    first += rows;
  }
  const absl::Status finished = (*writer)->Finish();
  ASSERT_TRUE(finished.ok()) << finished;
}

TEST(ArrowFileWriterTest, ReadsBackWithSluiceReader) {
  ScratchDir dir;
  const std::string path = dir / "sample.arrow";
  WriteSample(path);
  ASSERT_FALSE(fs::exists(dir / ".sample.arrow.tmp"));
  const std::vector<std::byte> bytes = ReadAll(path);
  absl::StatusOr<IpcContents> contents = ReadIpcBytes(bytes, path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->schema.fields.size(), 3u);
  EXPECT_EQ(contents->schema.fields[0].type, TypeId::kBinary);
  EXPECT_EQ(contents->schema.fields[1].type, TypeId::kInt64);
  EXPECT_EQ(contents->schema.fields[2].type, TypeId::kFixedSizeList);
  EXPECT_EQ(contents->schema.fields[2].list_size, 4);
  EXPECT_EQ(contents->schema.fields[2].children.at(0).type, TypeId::kFloat32);
  ASSERT_EQ(contents->batches.size(), 3u);
  int64_t i = 0;
  for (const RecordBatch& batch : contents->batches) {
    for (int64_t r = 0; r < batch.num_rows(); ++r, ++i) {
      const ArrayView& blob = batch.column(0);
      EXPECT_EQ(blob.IsNull(r), i == 2);
      if (i != 2) {
        const std::span<const std::byte> value = blob.Binary(r);
        ASSERT_EQ(static_cast<int64_t>(value.size()), i % 5);
        for (int64_t j = 0; j < i % 5; ++j) {
          EXPECT_EQ(std::to_integer<int>(value[j]), (7 * i + j) & 255);
        }
      }
      EXPECT_EQ(batch.column(1).IsNull(r), i == 5);
      if (i != 5) {
        EXPECT_EQ(batch.column(1).Value<int64_t>(r), 3 * i - 5);
      }
      const ArrayView& vec = batch.column(2);
      EXPECT_EQ(vec.IsNull(r), i == 7);
      const auto [begin, end] = vec.ListRange(r);
      ASSERT_EQ(end - begin, 4);
      EXPECT_EQ(vec.child(0).Value<float>(begin + 3), i + 0.75f);
    }
  }
  EXPECT_EQ(i, 10);
}

// Row counts come from each batch's metadata alone, through io_uring or the
// fallback.
TEST(ArrowFileWriterTest, RecordBatchRowsFromTheMetadata) {
  ScratchDir dir;
  const std::string path = dir / "sample.arrow";
  WriteSample(path);
  const std::vector<std::byte> head = ReadAll(path);
  EXPECT_TRUE(IsArrowFileStart(head));
  EXPECT_FALSE(IsArrowFileStart(std::span(head).first(5)));
  for (const bool io_uring : {true, false}) {
    asio::io_context io;
    AsyncFileReader reader(io, {.use_io_uring = io_uring});
    sluice::testing::CoroutineRunner runner(io);
    std::vector<int64_t> rows;
    runner.Spawn([&]() -> asio::awaitable<void> {
      absl::StatusOr<std::unique_ptr<ArrowFileReader>> file =
          co_await ArrowFileReader::Open(reader, path);
      EXPECT_TRUE(file.ok()) << file.status();
      if (!file.ok()) co_return;
      absl::StatusOr<std::vector<int64_t>> counted =
          co_await (*file)->RecordBatchRows();
      EXPECT_TRUE(counted.ok()) << counted.status();
      if (counted.ok()) rows = *counted;
    });
    runner.RunToCompletion();
    EXPECT_EQ(rows, (std::vector<int64_t>{4, 3, 3})) << io_uring;
  }
}

// RecordBatchRows of `path`, through io_uring or the fallback.
absl::StatusOr<std::vector<int64_t>> CountRows(const std::string& path,
                                               bool io_uring) {
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = io_uring});
  sluice::testing::CoroutineRunner runner(io);
  absl::StatusOr<std::vector<int64_t>> rows =
      absl::UnknownError("not finished");
  runner.Spawn([&]() -> asio::awaitable<void> {
    absl::StatusOr<std::unique_ptr<ArrowFileReader>> file =
        co_await ArrowFileReader::Open(reader, path);
    if (!file.ok()) {
      rows = file.status();
      co_return;
    }
    rows = co_await (*file)->RecordBatchRows();
  });
  runner.RunToCompletion();
  return rows;
}

// The metadata of many record batches is read in groups: 150 batches of
// 1..7 rows cross two group boundaries, and every count comes back in
// order.
TEST(ArrowFileWriterTest, RecordBatchRowsOfManyBatches) {
  ScratchDir dir;
  const std::string path = dir / "many.arrow";
  std::vector<int64_t> expected;
  {
    absl::StatusOr<std::unique_ptr<ArrowFileWriter>> writer =
        ArrowFileWriter::Create(path, {Int64Column("label")});
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int64_t i = 0; i < 150; ++i) {
      const int64_t rows = i % 7 + 1;
      std::vector<int64_t> labels(static_cast<size_t>(rows), i);
      const absl::Status status =
          (*writer)->WriteRecordBatch(rows, {{.int64 = labels}});
      ASSERT_TRUE(status.ok()) << status;
      expected.push_back(rows);
    }
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  for (const bool io_uring : {true, false}) {
    absl::StatusOr<std::vector<int64_t>> rows = CountRows(path, io_uring);
    ASSERT_TRUE(rows.ok()) << rows.status();
    EXPECT_EQ(*rows, expected) << io_uring;
  }
}

// PageCongruentSpan puts `size` bytes inside the buffer at the address
// congruent to the file offset modulo 4096 (the kernel copies fastest
// there).
TEST(ReadOnlyFileTest, PageCongruentSpanMatchesTheOffsetWithinAPage) {
  std::vector<std::byte> buffer;
  for (const int64_t offset : {0, 8, 16, 4088, 4096, 98760}) {
    for (const size_t size : {1, 100, 5000}) {
      const std::span<std::byte> span =
          internal::PageCongruentSpan(buffer, offset, size);
      EXPECT_EQ(span.size(), size);
      EXPECT_EQ((reinterpret_cast<uintptr_t>(span.data()) -
                 static_cast<uintptr_t>(offset)) %
                    4096,
                0u)
          << offset;
      EXPECT_GE(span.data(), buffer.data());
      EXPECT_LE(span.data() + span.size(), buffer.data() + buffer.size());
    }
  }
}

// A recycled buffer is never shortened: a smaller read leaves its length
// (and the bytes past the read) as they were, so the next larger read
// reuses them without std::vector zero-filling the tail again; growing
// leaves half again as much room, so a somewhat larger read later does not
// reallocate.
TEST(ReadOnlyFileTest, RecycledBuffersKeepTheirLength) {
  std::vector<std::byte> buffer;
  internal::GrowWithoutShrinking(buffer, 10000);
  ASSERT_EQ(buffer.size(), 10000u);
  EXPECT_GE(buffer.capacity(), 15000u);
  buffer.back() = std::byte{7};
  internal::GrowWithoutShrinking(buffer, 100);
  EXPECT_EQ(buffer.size(), 10000u);
  EXPECT_EQ(buffer.back(), std::byte{7});
  const std::span<std::byte> span = internal::PageCongruentSpan(buffer, 0, 10);
  EXPECT_EQ(span.size(), 10u);
  EXPECT_EQ(buffer.size(), 10000u);
  EXPECT_EQ(buffer.back(), std::byte{7});
  const std::byte* const memory = buffer.data();
  internal::GrowWithoutShrinking(buffer, 14000);
  EXPECT_EQ(buffer.size(), 14000u);
  EXPECT_EQ(buffer.data(), memory);
  internal::GrowWithoutShrinking(buffer, 20000);
  EXPECT_EQ(buffer.size(), 20000u);
}

// ReadEachExactly fills every region from its offset, all in one call; a
// region that runs past the end of the file is a "file truncated" error
// naming the path.
TEST(ReadOnlyFileTest, ReadEachExactlyFillsEveryRegionOrNamesTheShortOne) {
  ScratchDir dir;
  const std::string path = dir / "bytes.bin";
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 100; ++i) out.put(static_cast<char>(i));
  }
  absl::StatusOr<internal::ReadOnlyFile> file =
      internal::ReadOnlyFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  for (const bool io_uring : {true, false}) {
    asio::io_context io;
    AsyncFileReader reader(io, {.use_io_uring = io_uring});
    sluice::testing::CoroutineRunner runner(io);
    std::vector<std::byte> a(10), b(20), c(20);
    absl::Status whole = absl::UnknownError("not run");
    absl::Status past_end = absl::UnknownError("not run");
    runner.Spawn([&]() -> asio::awaitable<void> {
      const internal::ReadOnlyFile::Region inside[] = {{0, a}, {50, b}};
      whole = co_await file->ReadEachExactly(reader, inside);
      const internal::ReadOnlyFile::Region beyond[] = {{0, a}, {90, c}};
      past_end = co_await file->ReadEachExactly(reader, beyond);
    });
    runner.RunToCompletion();
    ASSERT_TRUE(whole.ok()) << whole;
    EXPECT_EQ(a[9], std::byte{9});
    EXPECT_EQ(b[0], std::byte{50});
    EXPECT_EQ(b[19], std::byte{69});
    EXPECT_EQ(past_end.code(), absl::StatusCode::kDataLoss) << past_end;
    EXPECT_NE(past_end.message().find("file truncated"), std::string::npos)
        << past_end;
    EXPECT_NE(past_end.message().find(path), std::string::npos) << past_end;
  }
}

// Hugging Face's Audio layout, struct<bytes: binary, path: string>, beside
// a float32 column: 5 rows, struct null at row 1, bytes null at row 3,
// duration null at row 4.
void WriteAudioStruct(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ArrowFileWriter>> writer =
      ArrowFileWriter::Create(
          path,
          {StructColumn("audio", {BinaryColumn("bytes"), Utf8Column("path")}),
           Float32Column("duration")});
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::vector<int32_t> clip_offsets = {0}, path_offsets = {0};
  std::vector<std::byte> clips;
  std::string paths;
  std::vector<float> durations;
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3 * i; ++j) clips.push_back(std::byte(i * 16 + j));
    clip_offsets.push_back(static_cast<int32_t>(clips.size()));
    paths += "clip-00000" + std::to_string(i) + ".flac";
    path_offsets.push_back(static_cast<int32_t>(paths.size()));
    durations.push_back(0.5f + i);
  }
  const std::vector<uint8_t> audio_valid = {0b11101}, bytes_valid = {0b10111},
                             duration_valid = {0b01111};
  const absl::Status status = (*writer)->WriteRecordBatch(
      5, {{.validity = audio_valid,
           .children = {{.validity = bytes_valid,
                         .offsets = clip_offsets,
                         .bytes = clips},
                        {.offsets = path_offsets,
                         .bytes = std::as_bytes(std::span(paths))}}},
          {.validity = duration_valid, .float32 = durations}});
  ASSERT_TRUE(status.ok()) << status;
  const absl::Status finished = (*writer)->Finish();
  ASSERT_TRUE(finished.ok()) << finished;
}

// The struct, utf8 and float32 columns read back through ArrowFileReader
// (io_uring or the fallback) with their schema, nulls and values.
TEST(ArrowFileWriterTest, StructOfBytesAndPathReadsBackWithFileReader) {
  ScratchDir dir;
  const std::string path = dir / "audio.arrow";
  WriteAudioStruct(path);
  for (const bool io_uring : {true, false}) {
    SCOPED_TRACE(io_uring);
    asio::io_context io;
    AsyncFileReader reader(io, {.use_io_uring = io_uring});
    sluice::testing::CoroutineRunner runner(io);
    Schema schema;
    RecordBatch batch;
    runner.Spawn([&]() -> asio::awaitable<void> {
      absl::StatusOr<std::unique_ptr<ArrowFileReader>> file =
          co_await ArrowFileReader::Open(reader, path);
      EXPECT_TRUE(file.ok()) << file.status();
      if (!file.ok()) co_return;
      schema = (*file)->schema();
      EXPECT_EQ((*file)->num_record_batches(), 1);
      absl::StatusOr<RecordBatch> read = co_await (*file)->ReadRecordBatch(0);
      EXPECT_TRUE(read.ok()) << read.status();
      if (read.ok()) batch = *std::move(read);
    });
    runner.RunToCompletion();
    ASSERT_EQ(schema.fields.size(), 2u);
    const Field& audio = schema.fields[0];
    EXPECT_EQ(audio.name, "audio");
    EXPECT_EQ(audio.type, TypeId::kStruct);
    ASSERT_EQ(audio.children.size(), 2u);
    EXPECT_EQ(audio.children[0].name, "bytes");
    EXPECT_EQ(audio.children[0].type, TypeId::kBinary);
    EXPECT_EQ(audio.children[1].name, "path");
    EXPECT_EQ(audio.children[1].type, TypeId::kUtf8);
    EXPECT_EQ(schema.fields[1].type, TypeId::kFloat32);
    ASSERT_EQ(batch.num_rows(), 5);
    const ArrayView& column = batch.column(0);
    ASSERT_EQ(column.num_children(), 2u);
    EXPECT_EQ(column.null_count(), 1);
    EXPECT_EQ(batch.column(1).null_count(), 1);
    for (int i = 0; i < 5; ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(column.IsNull(i), i == 1);
      EXPECT_EQ(column.child(0).IsNull(i), i == 3);
      if (i != 3) {
        const std::span<const std::byte> clip = column.child(0).Binary(i);
        ASSERT_EQ(clip.size(), 3u * i);
        for (int j = 0; j < 3 * i; ++j) {
          EXPECT_EQ(std::to_integer<int>(clip[j]), i * 16 + j);
        }
      }
      EXPECT_EQ(column.child(1).String(i),
                "clip-00000" + std::to_string(i) + ".flac");
      EXPECT_EQ(batch.column(1).IsNull(i), i == 4);
      EXPECT_EQ(batch.column(1).Value<float>(i), 0.5f + i);
    }
  }
}

// The official apache-arrow JS library (pinned by scripts/setup.sh) reads
// the file and checks every value.
TEST(ArrowFileWriterTest, ReadsBackWithApacheArrowJs) {
#if defined(SLUICE_NODE) && defined(SLUICE_ARROW_JS_MODULES)
  ScratchDir dir;
  const std::string path = dir / "sample.arrow";
  WriteSample(path);
  const std::string out = dir / "node.out";
  const std::string command =
      std::string("'") + SLUICE_NODE + "' '" + SLUICE_READ_WRITTEN_FILE_MJS +
      "' '" + path + "' '" + SLUICE_ARROW_JS_MODULES + "' > '" + out + "' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(out);
  const std::string output((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output, "ok 10 rows\n");
#else
  GTEST_SKIP() << "node or apache-arrow missing (run scripts/setup.sh)";
#endif
}

TEST(ArrowFileWriterTest, RefusesUnsupportedColumnsAndMismatchedValues) {
  ScratchDir dir;
  const std::vector<std::vector<WriterColumn>> unsupported = {
      {{.name = "x", .type = TypeId::kFloat64}},
      {Float32VectorColumn("x", 0)},
      {StructColumn("x", {})},
      {StructColumn("audio", {BinaryColumn("bytes"),
                              {.name = "rate", .type = TypeId::kInt32}})},
  };
  for (const std::vector<WriterColumn>& columns : unsupported) {
    const absl::Status status =
        ArrowFileWriter::Create(dir / "a.arrow", columns).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  }
  const std::string message(
      ArrowFileWriter::Create(dir / "a.arrow", unsupported.back())
          .status()
          .message());
  EXPECT_NE(message.find("column 'audio.rate' of type int32"),
            std::string::npos)
      << message;
  absl::StatusOr<std::unique_ptr<ArrowFileWriter>> writer =
      ArrowFileWriter::Create(dir / "b.arrow", SampleColumns());
  ASSERT_TRUE(writer.ok());
  const std::vector<int64_t> labels = {1, 2};
  const std::vector<int32_t> offsets = {0, 0, 0};
  const std::vector<float> vec(8);
  EXPECT_EQ(
      (*writer)
          ->WriteRecordBatch(
              3, {{.offsets = offsets}, {.int64 = labels}, {.float32 = vec}})
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*writer)->WriteRecordBatch(2, {{.offsets = offsets}}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::exists(dir / ".b.arrow.tmp"));
  writer->reset();  // never finished: nothing left behind
  EXPECT_TRUE(fs::is_empty(dir.path()));

  // A struct member whose values do not match is named "struct.member".
  writer = ArrowFileWriter::Create(
      dir / "c.arrow",
      {StructColumn("audio", {BinaryColumn("bytes"), Utf8Column("path")})});
  ASSERT_TRUE(writer.ok()) << writer.status();
  const std::vector<int32_t> one_empty = {0, 0};
  const absl::Status short_path = (*writer)->WriteRecordBatch(
      2, {{.children = {{.offsets = offsets}, {.offsets = one_empty}}}});
  EXPECT_EQ(short_path.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(short_path.message().find("column 'audio.path'"), std::string::npos)
      << short_path;
  EXPECT_EQ((*writer)
                ->WriteRecordBatch(2, {{.children = {{.offsets = offsets}}}})
                .code(),
            absl::StatusCode::kInvalidArgument);
  writer->reset();
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace sluice::io::arrow
