// arrow_source's ROW_BLOCKS output: the same rows, values and skips as
// EXAMPLES; blocks that follow record batches or block_rows; block reads in
// flight when one fails; the survey's layout reused, or found again for a
// rewritten file; a batcher after the source gets views, and blocks when
// `output` is unset; a stop while blocks are being read.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/data_loader.h"
#include "engine/element_type.h"
#include "engine/typed_batch.h"
#include "gtest/gtest.h"
#include "io/arrow/arrow_file_writer.h"
#include "io/async_file_reader.h"
#include "stages/generic/arrow_source.h"
#include "stages/stage_factory.h"
#include "tests/io/arrow/ipc_test_writer.h"
#include "tests/stages/generic/arrow_source_test_data.h"
#include "tests/testing/npz_reader.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::sluice::arrow_source_testing::NextExample;
using ::sluice::arrow_source_testing::Nulls;
using ::sluice::arrow_source_testing::RowsConfig;
using ::sluice::arrow_source_testing::Skips;
using ::sluice::arrow_source_testing::VecValue;
using ::sluice::arrow_source_testing::WriteArrowFile;
using testing::ParseConfig;
using testing::ReadFileToString;
using testing::StageTotals;
using testing::TempDir;
using testing::WriteFile;

// One example as plain values: field name -> (dtype, shape, bytes).
using FlatRow =
    std::map<std::string, std::tuple<DType, std::vector<int64_t>, std::string>>;

FlatRow Flatten(const Example& example) {
  FlatRow row;
  for (const auto& [name, field] : example.fields()) {
    row[name] = {
        field.dtype(), field.shape(),
        std::string(reinterpret_cast<const char*>(field.bytes().data()),
                    field.bytes().size())};
  }
  return row;
}

std::vector<FlatRow> Flatten(const ExampleBlock& block) {
  std::vector<FlatRow> rows(block.rows());
  for (const BlockColumn& column : block.columns()) {
    for (int64_t r = 0; r < block.rows(); ++r) {
      rows[r][column.name] = {
          column.dtype, column.example_shape,
          std::string(reinterpret_cast<const char*>(column.data) +
                          r * column.example_bytes,
                      column.example_bytes)};
    }
  }
  return rows;
}

// The first `limit` rows of `config` (until its end), as EXAMPLES or
// ROW_BLOCKS give them, and the stage's skip counts.
std::pair<std::vector<FlatRow>, std::map<std::string, uint64_t>> FlatRows(
    const std::string& config, bool blocks, size_t limit) {
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(config));
  loader.Start();
  std::vector<FlatRow> rows;
  while (rows.size() < limit) {
    if (blocks) {
      auto got = loader.GetNextFor<ExampleBlock>("", std::chrono::seconds(60));
      if (!got.item) break;
      for (FlatRow& row : Flatten(*got.item)) rows.push_back(std::move(row));
    } else {
      std::optional<Example> example = NextExample(loader);
      if (!example) break;
      rows.push_back(Flatten(*example));
    }
  }
  loader.Stop();
  std::map<std::string, uint64_t> skips;
  const StageMetricProto totals = StageTotals(loader, "rows");
  for (const SkipCountProto& skip : totals.skipped()) {
    skips[skip.reason()] += skip.count();
  }
  return {rows, skips};
}

TEST(ArrowSourceTest, RowBlocksCarryTheSameRowsValuesAndSkipsAsExamples) {
  TempDir dir;
  // Nulls, a blob over max_value_bytes, blobs of many lengths (each length
  // change ends a block), record batches of 4 and 5 rows.
  WriteArrowFile(dir / "a.arrow", 0, 10, 4, {.blob_row = 2, .label_row = 4});
  WriteArrowFile(dir / "b.arrow", 10, 13, 5);
  for (const char* mode : {"EVAL", "TRAIN"}) {
    const auto [rows, skips] =
        FlatRows(RowsConfig(dir.path(), mode, 7, true, "max_value_bytes: 16"),
                 false, 40);
    const auto [block_rows, block_skips] =
        FlatRows(RowsConfig(dir.path(), mode, 7, true,
                            "max_value_bytes: 16 output: ROW_BLOCKS"),
                 true, 40);
    ASSERT_GE(rows.size(), 20u) << mode;
    EXPECT_EQ(block_rows, rows) << mode;
    if (std::string(mode) == "EVAL") {
      EXPECT_EQ(block_skips, skips);
      EXPECT_EQ(skips, (std::map<std::string, uint64_t>{
                           {"null_value", 2}, {"value_too_large", 1}}));
    }
  }
}

// The sizes of the blocks of `config`, checking the vec values in order.
std::vector<int64_t> BlockSizes(const std::string& config,
                                uint64_t* record_batches) {
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(config));
  loader.Start();
  std::vector<int64_t> sizes;
  int64_t index = 0;
  while (true) {
    auto got = loader.GetNextFor<ExampleBlock>("", std::chrono::seconds(60));
    if (!got.item) break;
    sizes.push_back(got.item->rows());
    const BlockColumn* vec = got.item->Find("vec");
    EXPECT_NE(vec, nullptr);
    if (vec == nullptr) break;
    EXPECT_EQ(vec->example_shape, std::vector<int64_t>{4});
    EXPECT_EQ(vec->example_bytes, 16u);
    for (int64_t r = 0; r < got.item->rows(); ++r, ++index) {
      const float* values = reinterpret_cast<const float*>(vec->data) + 4 * r;
      for (int k = 0; k < 4; ++k) EXPECT_EQ(values[k], VecValue(index, k));
    }
  }
  loader.Stop();
  *record_batches = StageTotals(loader, "rows").arrow_source().record_batches();
  return sizes;
}

TEST(ArrowSourceTest, RowBlocksFollowRecordBatchesOrBlockRows) {
  TempDir dir;
  WriteArrowFile(dir / "a.arrow", 0, 10, 4);   // record batches 4, 4, 2
  WriteArrowFile(dir / "b.arrow", 10, 13, 5);  // 5, 5, 3
  // One thread reads one block at a time; four read up to four at once
  // (readahead 8), or as many as `readahead` lets them (2 by default, 1),
  // delivered in row order all the same.
  for (const auto& shape :
       {std::pair{"1", ""}, std::pair{"4", "readahead: 8"}, std::pair{"4", ""},
        std::pair{"2", "readahead: 1"}}) {
    // Named copies: clang 14 lambdas cannot capture structured bindings.
    const std::string threads = shape.first;
    const std::string readahead = shape.second;
    SCOPED_TRACE(std::string(threads) + " " + readahead);
    const auto config = [&](const std::string& extra) {
      return std::string("worker_threads: ") + threads +
             " stage { name: 'files' file_path_provider { directory: '" +
             dir.path() +
             "' mode: ONCE } }"
             " stage { name: 'rows' input: 'files' arrow_source { mode: EVAL"
             " output: ROW_BLOCKS " +
             readahead + " column { name: 'vec' } column { name: 'label' } " +
             extra + " } }";
    };
    uint64_t record_batches = 0;
    EXPECT_EQ(BlockSizes(config(""), &record_batches),
              (std::vector<int64_t>{4, 4, 2, 5, 5, 3}));
    EXPECT_EQ(record_batches, 6u);
    // Blocks end on multiples of 4 rows of the stream, across the files'
    // record batches; b.arrow's first block completes the 4 rows a.arrow
    // began.
    EXPECT_EQ(BlockSizes(config("block_rows: 4"), &record_batches),
              (std::vector<int64_t>{4, 4, 2, 2, 4, 4, 3}));
    EXPECT_EQ(record_batches, 6u);
    EXPECT_EQ(BlockSizes(config("block_rows: 3"), &record_batches),
              (std::vector<int64_t>{3, 3, 3, 1, 2, 3, 3, 3, 2}));
    EXPECT_EQ(record_batches, 6u);
  }
}

// Four worker threads reading blocks of 4 rows of the files in `dir`, up
// to four at once (readahead 8), the columns given.
std::string BlocksAtOnceConfig(const std::string& dir, const std::string& mode,
                               const std::string& columns) {
  return "worker_threads: 4 stage { name: 'files' file_path_provider { "
         "directory: '" +
         dir + "' mode: ONCE } } stage { name: 'rows' input: 'files' " +
         "arrow_source { mode: " + mode +
         " output: ROW_BLOCKS block_rows: 4 readahead: 8 " + columns + " } }";
}

// For its lifetime (also when a test ends early), counts the reads of the
// file at `path` by offset, and fails with EIO those at `fail_offset`.
class WatchedReads {
 public:
  explicit WatchedReads(std::string path,
                        std::optional<uint64_t> fail_offset = std::nullopt)
      : path_(std::move(path)), fail_offset_(fail_offset) {
    watched_ = this;
    io::AsyncFileReader::SetFaultInjectorForTesting(OnRead);
  }
  ~WatchedReads() {
    io::AsyncFileReader::SetFaultInjectorForTesting(nullptr);
    watched_ = nullptr;
  }
  WatchedReads(const WatchedReads&) = delete;
  WatchedReads& operator=(const WatchedReads&) = delete;

  // Offset -> reads so far.
  std::map<uint64_t, int> reads() const {
    std::lock_guard lock(mu_);
    return reads_;
  }

 private:
  static std::optional<int> OnRead(int fd, uint64_t offset) {
    std::error_code error;
    const std::filesystem::path target = std::filesystem::read_symlink(
        "/proc/self/fd/" + std::to_string(fd), error);
    if (error || target != watched_->path_) return std::nullopt;
    {
      std::lock_guard lock(watched_->mu_);
      ++watched_->reads_[offset];
    }
    if (offset == watched_->fail_offset_) return EIO;
    return std::nullopt;
  }

  static inline WatchedReads* watched_ = nullptr;
  const std::string path_;
  const std::optional<uint64_t> fail_offset_;
  mutable std::mutex mu_;
  std::map<uint64_t, int> reads_;
};

// Where the 16 bytes of row `row`'s vec value sit in the file at `path`.
uint64_t VecOffset(const std::string& path, int64_t row) {
  const std::string bytes = ReadFileToString(path).value();
  float vec[4];
  for (int k = 0; k < 4; ++k) vec[k] = VecValue(row, k);
  const size_t at = bytes.find(
      std::string_view(reinterpret_cast<const char*>(vec), sizeof vec));
  EXPECT_NE(at, std::string::npos);
  return at;
}

TEST(ArrowSourceTest, AFailedBlockReadSkipsTheRestOfItsFileWithReadsInFlight) {
  TempDir dir;
  WriteArrowFile(dir / "a.arrow", 0, 40, 6);
  WriteArrowFile(dir / "b.arrow", 40, 13, 5);
  // The read of the block of rows 20..23 fails; up to four blocks are read
  // at once, so later blocks of a.arrow may be read already: they are
  // dropped, their buffers and permits returned, and b.arrow follows.
  const WatchedReads poisoned(dir / "a.arrow", VecOffset(dir / "a.arrow", 20));
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(BlocksAtOnceConfig(
      dir.path(), "EVAL", "column { name: 'vec' } column { name: 'label' }")));
  loader.Start();
  std::vector<int64_t> labels;
  while (true) {
    auto got = loader.GetNextFor<ExampleBlock>("", std::chrono::seconds(60));
    if (!got.item) break;
    const BlockColumn* label = got.item->Find("label");
    ASSERT_NE(label, nullptr);
    for (int64_t r = 0; r < got.item->rows(); ++r) {
      labels.push_back(reinterpret_cast<const int64_t*>(label->data)[r]);
    }
  }
  loader.Stop();
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 20; ++i) expected.push_back(10 * i);
  for (int64_t i = 40; i < 53; ++i) expected.push_back(10 * i);
  EXPECT_EQ(labels, expected);
  EXPECT_EQ(Skips(StageTotals(loader, "rows"), "read_error"), 1u);
}

// Where the footer of the Arrow IPC file at `path` begins: the file ends
// [footer][int32 footer length]["ARROW1"].
uint64_t FooterStart(const std::string& path) {
  const std::string bytes = ReadFileToString(path).value();
  int32_t length = 0;
  std::memcpy(&length, bytes.data() + bytes.size() - 10, sizeof length);
  return bytes.size() - 10 - static_cast<uint64_t>(length);
}

TEST(ArrowSourceTest, BlockReadsUseTheLayoutTheSurveyFound) {
  TempDir dir;
  WriteArrowFile(dir / "a.arrow", 0, 40, 6);  // 7 record batches
  const WatchedReads watched(dir / "a.arrow");
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(BlocksAtOnceConfig(
      dir.path(), "EVAL", "column { name: 'vec' } column { name: 'label' }")));
  loader.Start();
  int64_t rows = 0;
  while (
      auto got =
          loader.GetNextFor<ExampleBlock>("", std::chrono::seconds(60)).item) {
    rows += got->rows();
  }
  loader.Stop();
  EXPECT_EQ(rows, 40);
  // The survey read each record batch's metadata, the blocks their values;
  // the read of the file opened it again (magic and footer) but read no
  // metadata again.
  const uint64_t footer = FooterStart(dir / "a.arrow");
  int metadata_and_values = 0;
  for (const auto& [offset, reads] : watched.reads()) {
    if (offset == 0 || offset >= footer) continue;
    ++metadata_and_values;
    EXPECT_EQ(reads, 1) << "offset " << offset;
  }
  // 7 metadata reads and 10 blocks of 2 columns at least.
  EXPECT_GE(metadata_and_values, 7 + 20);
}

TEST(ArrowSourceTest, AFileRewrittenAfterTheSurveyIsLocatedAgain) {
  TempDir dir;
  TempDir elsewhere;
  WriteArrowFile(dir / "a.arrow", 0, 10, 4);  // record batches 4, 4, 2
  WriteArrowFile(dir / "b.arrow", 10, 6, 6);
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(BlocksAtOnceConfig(
      dir.path(), "TRAIN", "column { name: 'vec' } column { name: 'label' }")));
  loader.Start();
  // Checks each row's values against its index; false at the end.
  const auto check_next_block = [&] {
    auto got = loader.GetNextFor<ExampleBlock>("", std::chrono::seconds(60));
    if (!got.item) return false;
    const BlockColumn* index = got.item->Find("index");
    const BlockColumn* vec = got.item->Find("vec");
    const BlockColumn* label = got.item->Find("label");
    EXPECT_TRUE(index != nullptr && vec != nullptr && label != nullptr);
    if (index == nullptr || vec == nullptr || label == nullptr) return false;
    for (int64_t r = 0; r < got.item->rows(); ++r) {
      const int64_t i = reinterpret_cast<const int64_t*>(index->data)[r];
      EXPECT_EQ(reinterpret_cast<const int64_t*>(label->data)[r], 10 * i);
      const float* values = reinterpret_cast<const float*>(vec->data) + 4 * r;
      for (int k = 0; k < 4; ++k) EXPECT_EQ(values[k], VecValue(i, k));
    }
    return true;
  };
  ASSERT_TRUE(check_next_block());
  // The same rows in record batches of 3: the values lie elsewhere in the
  // file. Later passes open the new file (another inode) and must locate
  // its columns again rather than use the survey's layout.
  WriteArrowFile(elsewhere / "a.arrow", 0, 10, 3);
  std::filesystem::rename(elsewhere / "a.arrow", dir / "a.arrow");
  for (int block = 0; block < 60; ++block) ASSERT_TRUE(check_next_block());
  loader.Stop();
  EXPECT_EQ(Skips(StageTotals(loader, "rows"), "file_changed"), 0u);
}

TEST(ArrowSourceTest, AFileWithMisplacedBlockValuesKeepsItsPlaceInTheIndex) {
  TempDir dir;
  {  // 2 rows of label whose values the metadata puts past the body
    namespace t = io::arrow::testing;
    t::TestSchema schema{
        .fields = {t::TestField{
            .name = "label", .type = t::fb::Type_Int, .bit_width = 64}}};
    t::TestBatch batch{.length = 2,
                       .nodes = {{2, 0}},
                       .buffers = {{}, {t::Values<int64_t>({0, 10})}}};
    batch.buffers[1].offset = 1 << 20;
    WriteFile(dir / "a.arrow", t::MakeFile(schema, {batch}));
  }
  WriteArrowFile(dir / "b.arrow", 2, 5, 5);  // indexes 2-6 after a's 2 rows
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(
      BlocksAtOnceConfig(dir.path(), "EVAL", "column { name: 'label' }")));
  loader.Start();
  std::vector<int64_t> indexes;
  while (
      auto got =
          loader.GetNextFor<ExampleBlock>("", std::chrono::seconds(60)).item) {
    const BlockColumn* index = got->Find("index");
    const BlockColumn* label = got->Find("label");
    ASSERT_TRUE(index != nullptr && label != nullptr);
    for (int64_t r = 0; r < got->rows(); ++r) {
      const int64_t i = reinterpret_cast<const int64_t*>(index->data)[r];
      EXPECT_EQ(reinterpret_cast<const int64_t*>(label->data)[r], 10 * i);
      indexes.push_back(i);
    }
  }
  loader.Stop();
  // As with EXAMPLES output: a is surveyed (its rows hold their indexes)
  // and skipped when read.
  EXPECT_EQ(indexes, (std::vector<int64_t>{2, 3, 4, 5, 6}));
  const StageMetricProto totals = StageTotals(loader, "rows");
  EXPECT_EQ(Skips(totals, "damaged_file"), 1u);
  EXPECT_EQ(totals.arrow_source().dataset_files(), 2u);
}

TEST(ArrowSourceTest, ABatcherAfterTheSourceGetsEveryBatchAsAView) {
  TempDir dir;
  // Record batches of 3 rows, batches of 4: as record-batch blocks, every
  // batch would span two blocks and be copied. The batcher states its
  // batch size to the source, whose blocks then end on batch boundaries.
  WriteArrowFile(dir / "a.arrow", 0, 12, 3);
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(
      "stage { name: 'files' file_path_provider { directory: '" + dir.path() +
      "' mode: ONCE } }"
      " stage { name: 'rows' input: 'files' arrow_source { mode: EVAL"
      " output: ROW_BLOCKS column { name: 'vec' } column { name: 'label' }"
      " } }"
      " stage { name: 'batches' input: 'rows' batcher { batch_size: 4"
      " field { name: 'vec' dtype: 'float32' shape: [4] }"
      " field { name: 'label' dtype: 'int64' } } }"));
  loader.Start();
  std::vector<TypedBatch> batches;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    batches.push_back(*std::move(batch));
  }
  loader.Stop();
  ASSERT_EQ(batches.size(), 3u);
  int64_t row = 0;
  for (const TypedBatch& batch : batches) {
    ASSERT_EQ(batch.size(), 4u);
    const auto* labels = static_cast<const int64_t*>(batch.tensor(1).data);
    const auto* vec = static_cast<const float*>(batch.tensor(0).data);
    for (int r = 0; r < 4; ++r, ++row) {
      EXPECT_EQ(labels[r], 10 * row);
      for (int k = 0; k < 4; ++k) EXPECT_EQ(vec[4 * r + k], VecValue(row, k));
    }
  }
  // No batch was copied: the batcher never needed a buffer of its own.
  EXPECT_EQ(StageTotals(loader, "batches").batcher().batch_buffer_bytes(), 0u);
}

// The batches of an eval pass over `dir` by arrow_source (with `output`,
// "" for unset) -> `middle` stages -> batcher, and the element type of the
// source's output channel.
std::pair<std::vector<std::vector<int64_t>>, std::string> LabelsAndOutputType(
    const std::string& dir, const std::string& output,
    const std::string& middle = "") {
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(
      "stage { name: 'files' file_path_provider { directory: '" + dir +
      "' mode: ONCE } }"
      " stage { name: 'rows' input: 'files' arrow_source { mode: EVAL " +
      output + " column { name: 'label' } } }" + middle +
      " stage { name: 'batches' input: '" +
      (middle.empty() ? "rows" : "middle") +
      "' batcher { batch_size: 4 field { name: 'label' dtype: 'int64' } } }"));
  loader.Start();
  std::vector<std::vector<int64_t>> labels;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    const auto* values = static_cast<const int64_t*>(batch->tensor(0).data);
    labels.emplace_back(values, values + batch->size());
  }
  loader.Stop();
  const StageMetricProto rows = StageTotals(loader, "rows");
  return {labels, rows.output_queue_metrics(0).element_type()};
}

TEST(ArrowSourceTest, AnUnsetOutputIsBlocksForABatcherAndExamplesOtherwise) {
  TempDir dir;
  WriteArrowFile(dir / "a.arrow", 0, 12, 3);
  const auto [by_default, default_type] = LabelsAndOutputType(dir.path(), "");
  const auto [as_examples, examples_type] =
      LabelsAndOutputType(dir.path(), "output: EXAMPLES");
  EXPECT_EQ(default_type, ElementTypeName<ExampleBlock>());
  EXPECT_EQ(examples_type, ElementTypeName<Example>());
  EXPECT_EQ(by_default, as_examples);
  ASSERT_EQ(by_default.size(), 3u);
  EXPECT_EQ(by_default[2], (std::vector<int64_t>{80, 90, 100, 110}));
  // A per-row stage between them takes examples.
  const auto [through_a_stage, through_type] = LabelsAndOutputType(
      dir.path(), "",
      " stage { name: 'middle' input: 'rows' shuffle_buffer { size: 1 } }");
  EXPECT_EQ(through_type, ElementTypeName<Example>());
  EXPECT_EQ(through_a_stage, as_examples);
}

TEST(ArrowSourceTest, BlockRowsKeepTheRowsAndSkipsOfFilesWithNulls) {
  TempDir dir;
  // a.arrow: a null label in its second record batch; b.arrow: none.
  WriteArrowFile(dir / "a.arrow", 0, 10, 4, {.label_row = 5});
  WriteArrowFile(dir / "b.arrow", 10, 13, 5);
  const std::string columns =
      "column { name: 'vec' } column { name: 'label' field: 'y' }";
  const auto config = [&](const std::string& output) {
    return "stage { name: 'files' file_path_provider { directory: '" +
           dir.path() +
           "' mode: ONCE } }"
           " stage { name: 'rows' input: 'files' arrow_source { mode: EVAL " +
           columns + " output: " + output + " } }";
  };
  const auto [rows, skips] = FlatRows(config("EXAMPLES"), false, 100);
  EXPECT_EQ(rows.size(), 22u);
  EXPECT_EQ(skips, (std::map<std::string, uint64_t>{{"null_value", 1}}));
  for (const char* output : {"ROW_BLOCKS", "ROW_BLOCKS block_rows: 3"}) {
    const auto [block_rows, block_skips] = FlatRows(config(output), true, 100);
    EXPECT_EQ(block_rows, rows) << output;
    EXPECT_EQ(block_skips, skips) << output;
  }
}

TEST(ArrowSourceTest, StopWhileReadingBlocksAtOnceReturns) {
  TempDir dir;
  WriteArrowFile(dir / "a.arrow", 0, 400, 7);
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(
      BlocksAtOnceConfig(dir.path(), "TRAIN", "column { name: 'vec' }")));
  loader.Start();
  for (int i = 0; i < 50; ++i) {
    auto got = loader.GetNextFor<ExampleBlock>("", std::chrono::seconds(60));
    ASSERT_TRUE(got.item.has_value());
    EXPECT_EQ(got.item->rows(), 4);
  }
  loader.Stop();  // reads in flight, the output full
  EXPECT_EQ(loader.GetMetrics().error(), "");
}

}  // namespace
}  // namespace sluice
