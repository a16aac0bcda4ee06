// The async Arrow readers (ArrowFileReader, ArrowStreamReader) on files
// built by hand, with the io_uring backend and the pread fallback: every
// batch, buffer recycling, concurrent reads, damage, SkipNext, file
// versions and column rows across record batches.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/arrow_stream_reader.h"
#include "tests/io/arrow/async_reads.h"
#include "tests/io/arrow/ipc_test_batches.h"
#include "tests/io/arrow/ipc_test_writer.h"

namespace sluice::io::arrow {
namespace {

using testing::ExpectError;
using testing::ExpectMixed;
using testing::Int32Batch;
using testing::Int32Field;
using testing::IpcFormat;
using testing::MakeFile;
using testing::MakeStream;
using testing::MixedBatch;
using testing::MixedSchema;
using testing::ReadAllAsync;
using testing::TestBatch;
using testing::TestSchema;
using testing::TouchEverything;
using testing::Utf8Batch;
using testing::Utf8Field;
using testing::Values;

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
