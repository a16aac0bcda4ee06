#include "stages/generic/arrow_source.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/arrow/arrow_file_writer.h"
#include "io/async_file_reader.h"
#include "stages/stage_factory.h"
#include "tests/io/arrow/ipc_test_writer.h"
#include "tests/testing/npz_reader.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing::ParseConfig;
using testing::ReadFileToString;
using testing::StageTotals;
using testing::TempDir;
using testing::WriteFile;

// Row `i` of a dataset (its global index): label 10 i, blob of BlobSize(i)
// bytes of value i & 255, vec [i, i + 0.5, i + 1, i + 1.5].
int64_t BlobSize(int64_t i) { return i % 100 == 6 ? 30 : i % 7; }
float VecValue(int64_t i, int k) { return static_cast<float>(i) + 0.5f * k; }

struct Nulls {
  int64_t blob_row = -1;   // file row whose blob is null
  int64_t label_row = -1;  // file row whose label is null
};

// Writes rows [first, first + rows) of the formula in batches of
// `batch_rows`.
void WriteArrowFile(const std::string& path, int64_t first, int64_t rows,
                    int64_t batch_rows, Nulls nulls = {},
                    std::vector<std::string> names = {"blob", "vec", "label"}) {
  absl::StatusOr<std::unique_ptr<io::arrow::ArrowFileWriter>> writer =
      io::arrow::ArrowFileWriter::Create(
          path, {io::arrow::BinaryColumn(names[0]),
                 io::arrow::Float32VectorColumn(names[1], 4),
                 io::arrow::Int64Column(names[2])});
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int64_t start = 0; start < rows; start += batch_rows) {
    const int64_t n = std::min(batch_rows, rows - start);
    std::vector<int32_t> offsets = {0};
    std::vector<std::byte> bytes;
    std::vector<float> vec;
    std::vector<int64_t> labels;
    std::vector<uint8_t> blob_valid((n + 7) / 8, 0xff);
    std::vector<uint8_t> label_valid((n + 7) / 8, 0xff);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t i = first + start + r;
      bytes.insert(bytes.end(), BlobSize(i), static_cast<std::byte>(i & 255));
      offsets.push_back(static_cast<int32_t>(bytes.size()));
      for (int k = 0; k < 4; ++k) vec.push_back(VecValue(i, k));
      labels.push_back(10 * i);
      if (start + r == nulls.blob_row) blob_valid[r / 8] &= ~(1u << (r % 8));
      if (start + r == nulls.label_row) label_valid[r / 8] &= ~(1u << (r % 8));
    }
    ASSERT_TRUE(
        (*writer)
            ->WriteRecordBatch(
                n,
                {{.validity = blob_valid, .offsets = offsets, .bytes = bytes},
                 {.float32 = vec},
                 {.validity = label_valid, .int64 = labels}})
            .ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
}

// Four files of 5, 7, 1 and 6 rows (19 in all), named so that the sorted
// order is the index order.
constexpr int64_t kRows[] = {5, 7, 1, 6};
constexpr int64_t kTotalRows = 19;
void WriteDataset(const TempDir& dir) {
  int64_t first = 0;
  int n = 0;
  for (int64_t rows : kRows) {
    WriteArrowFile(dir / ("part-" + std::to_string(n++) + ".arrow"), first,
                   rows, /*batch_rows=*/3);
    first += rows;
  }
}

std::string RowsConfig(const std::string& dir, const std::string& mode,
                       uint64_t seed = 0, bool io_uring = true,
                       const std::string& extra = "") {
  return "worker_threads: 2 metrics_interval_seconds: 0.02 seed: " +
         std::to_string(seed) + (io_uring ? "" : " use_io_uring: false") +
         " stage { name: 'files' file_path_provider { directory: '" + dir +
         "' mode: ONCE } }"
         " stage { name: 'rows' input: 'files' arrow_source { mode: " +
         mode +
         " column { name: 'blob' } column { name: 'vec' }"
         " column { name: 'label' field: 'y' } " +
         extra + " } }";
}

std::optional<Example> NextExample(DataLoader& loader) {
  auto result = loader.GetNextFor<Example>("", std::chrono::seconds(60));
  EXPECT_NE(result.kind, Channel<Example>::GetResult::Kind::kTimeout);
  return std::move(result.item);
}

int64_t Int64(const Example& example, const std::string& name) {
  const ExampleField* field = example.Find(name);
  EXPECT_NE(field, nullptr) << name;
  return field == nullptr ? -1 : field->scalar<int64_t>();
}

// Checks every mapped value of `example` against the formula.
void ExpectRowValues(const Example& example) {
  const int64_t i = Int64(example, "index");
  EXPECT_EQ(Int64(example, "y"), 10 * i);
  const ExampleField* blob = example.Find("blob");
  ASSERT_NE(blob, nullptr);
  EXPECT_EQ(blob->dtype(), DType::kUInt8);
  ASSERT_EQ(blob->shape(), std::vector<int64_t>{BlobSize(i)});
  for (std::byte b : blob->bytes()) EXPECT_EQ(std::to_integer<int>(b), i & 255);
  const ExampleField* vec = example.Find("vec");
  ASSERT_NE(vec, nullptr);
  EXPECT_EQ(vec->dtype(), DType::kFloat32);
  ASSERT_EQ(vec->shape(), std::vector<int64_t>{4});
  for (int k = 0; k < 4; ++k) EXPECT_EQ(vec->data<float>()[k], VecValue(i, k));
}

// Every example of an EVAL run until the output ends, each checked against
// the formula and its seed 0; their indexes in arrival order.
std::vector<int64_t> EvalIndexes(DataLoader& loader) {
  std::vector<int64_t> indexes;
  while (std::optional<Example> example = NextExample(loader)) {
    ExpectRowValues(*example);
    EXPECT_EQ(Int64(*example, "seed"), 0);
    indexes.push_back(Int64(*example, "index"));
  }
  return indexes;
}

// 0, 1, ..., count - 1.
std::vector<int64_t> IndexesUpTo(int64_t count) {
  std::vector<int64_t> indexes(count);
  std::iota(indexes.begin(), indexes.end(), 0);
  return indexes;
}

uint64_t Skips(const StageMetricProto& metrics, const std::string& reason) {
  for (const SkipCountProto& skip : metrics.skipped()) {
    if (skip.reason() == reason) return skip.count();
  }
  return 0;
}

class ArrowSourceBackendTest : public ::testing::TestWithParam<bool> {};

TEST_P(ArrowSourceBackendTest, EvalYieldsEveryRowOnceInOrderThenEnds) {
  TempDir dir;
  WriteDataset(dir);
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(RowsConfig(dir.path(), "EVAL", 5, GetParam())));
  loader.Start();
  EXPECT_EQ(EvalIndexes(loader), IndexesUpTo(kTotalRows));
  loader.Stop();
  const StageMetricProto totals = StageTotals(loader, "rows");
  EXPECT_EQ(totals.arrow_source().rows_emitted(), kTotalRows);
  EXPECT_EQ(totals.arrow_source().files(), 4u);
  EXPECT_EQ(totals.arrow_source().record_batches(), 2u + 3u + 1u + 2u);
  EXPECT_EQ(totals.arrow_source().passes(), 1u);
  EXPECT_EQ(totals.arrow_source().dataset_rows(), kTotalRows);
  EXPECT_GT(totals.arrow_source().bytes(), 0u);
  EXPECT_EQ(totals.skipped_size(), 0);
  // The files were just written: their pages are cached, copied at once.
  const DataLoaderMetricsProto metrics = loader.GetMetrics();
  EXPECT_GT(metrics.reads_from_page_cache(), 0u) << metrics.DebugString();
}

// The survey reads several files' metadata at once; the index still
// follows the sorted paths, and damaged files among them are skipped.
TEST_P(ArrowSourceBackendTest, ManyFilesSurveyedAtOnceKeepTheirOrder) {
  TempDir dir;
  int64_t first = 0;
  for (int n = 0; n < 30; ++n) {
    char name[32];
    std::snprintf(name, sizeof(name), "part-%02d", n);
    if (n % 7 == 3) {
      WriteFile(dir / (std::string(name) + ".arrow"), "not arrow");
      continue;
    }
    const int64_t rows = 1 + n % 3;
    WriteArrowFile(dir / (std::string(name) + ".arrow"), first, rows,
                   /*batch_rows=*/2);
    first += rows;
  }
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(RowsConfig(dir.path(), "EVAL", 0, GetParam())));
  loader.Start();
  EXPECT_EQ(EvalIndexes(loader), IndexesUpTo(first));
  loader.Stop();
  const StageMetricProto totals = StageTotals(loader, "rows");
  EXPECT_EQ(Skips(totals, "not_arrow"), 4u);
  EXPECT_EQ(totals.arrow_source().dataset_files(), 26u);
}

INSTANTIATE_TEST_SUITE_P(IoBackends, ArrowSourceBackendTest,
                         ::testing::Values(true, false), [](const auto& info) {
                           return info.param ? "IoUring" : "Fallback";
                         });

// The first `passes` passes of a TRAIN run: (index, seed) per example.
std::vector<std::vector<std::pair<int64_t, int64_t>>> TrainPasses(
    const std::string& dir, uint64_t seed, int passes) {
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(RowsConfig(dir, "TRAIN", seed)));
  loader.Start();
  std::vector<std::vector<std::pair<int64_t, int64_t>>> result(passes);
  for (auto& pass : result) {
    for (int64_t n = 0; n < kTotalRows; ++n) {
      std::optional<Example> example = NextExample(loader);
      if (!example) {
        ADD_FAILURE() << "train ended";
        return result;
      }
      ExpectRowValues(*example);
      pass.emplace_back(Int64(*example, "index"), Int64(*example, "seed"));
    }
  }
  loader.Stop();
  return result;
}

std::vector<int64_t> Indexes(
    const std::vector<std::pair<int64_t, int64_t>>& pass) {
  std::vector<int64_t> indexes;
  for (const auto& [index, seed] : pass) indexes.push_back(index);
  return indexes;
}

TEST(ArrowSourceTest, TrainOrderIsAFunctionOfTheSeedAndChangesPerPass) {
  TempDir dir;
  WriteDataset(dir);
  const auto run = TrainPasses(dir.path(), 41, 3);
  EXPECT_EQ(TrainPasses(dir.path(), 41, 3), run);  // reproducible
  for (int p = 0; p < 3; ++p) {
    std::vector<int64_t> sorted = Indexes(run[p]);
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(kTotalRows);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all) << "pass " << p;  // every row once per pass
    for (const auto& [index, seed] : run[p]) {
      EXPECT_EQ(static_cast<uint64_t>(seed), 41u + p + index);
    }
  }
  EXPECT_NE(Indexes(run[0]), Indexes(run[1]));  // reshuffled per pass
  EXPECT_NE(Indexes(TrainPasses(dir.path(), 42, 1)[0]), Indexes(run[0]));
}

TEST(ArrowSourceTest, IndexIsStableWhateverTheDiscoveryOrder) {
  // Files of a second directory level sort in between: the index follows
  // the sorted paths, not the order the scan met them.
  TempDir dir;
  std::filesystem::create_directory(dir / "b");
  WriteArrowFile(dir / "c.arrow", 8, 2, 2);
  WriteArrowFile(dir / "b/x.arrow", 3, 5, 2);
  WriteArrowFile(dir / "a.arrow", 0, 3, 2);
  for (int run = 0; run < 2; ++run) {
    DataLoader loader(CreateStage);
    loader.Configure(ParseConfig(RowsConfig(dir.path(), "EVAL")));
    loader.Start();
    EXPECT_EQ(EvalIndexes(loader), IndexesUpTo(10));
  }
}

TEST(ArrowSourceTest, ViewsKeepTheirBatchAliveAfterThePipelineIsGone) {
  TempDir dir;
  WriteArrowFile(dir / "a.arrow", 0, 30, 10);
  std::vector<Example> kept;
  {
    DataLoader loader(CreateStage);
    loader.Configure(ParseConfig(RowsConfig(dir.path(), "EVAL")));
    loader.Start();
    while (std::optional<Example> example = NextExample(loader)) {
      kept.push_back(std::move(*example));
    }
    loader.Stop();
  }
  ASSERT_EQ(kept.size(), 30u);
  for (const Example& example : kept) ExpectRowValues(example);
}

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

TEST(ArrowSourceTest, BadFilesAndRowsAreCountedAndGoodRowsFlow) {
  TempDir dir;
  // Good: rows 0-9, with a null blob at file row 2 and a null label at 4,
  // and a 30-byte blob at row 6 (max_value_bytes 16 drops it; the vec of
  // 16 bytes passes).
  WriteArrowFile(dir / "good.arrow", 0, 10, 4, {.blob_row = 2, .label_row = 4});
  WriteFile(dir / "junk.arrow", "this is not arrow at all");
  WriteFile(dir / "empty.ipc", "");
  WriteFile(dir / "notes.txt", "x");
  {  // truncated: the first half of a good file
    WriteArrowFile(dir / "full.tmp", 100, 10, 4);
    const std::string bytes = ReadFileToString(dir / "full.tmp").value();
    WriteFile(dir / "truncated.arrow", bytes.substr(0, bytes.size() / 2));
    std::filesystem::remove(dir / "full.tmp");
  }
  WriteArrowFile(dir / "renamed.feather", 200, 3, 3, {},
                 {"blob", "vec", "other"});
  {  // label as uint64: refused
    namespace t = io::arrow::testing;
    t::TestSchema schema{
        .fields = {t::TestField{.name = "blob", .type = t::fb::Type_Binary},
                   t::TestField{
                       .name = "vec", .type = t::fb::Type_Int, .bit_width = 32},
                   t::TestField{.name = "label",
                                .type = t::fb::Type_Int,
                                .bit_width = 64,
                                .is_signed = false}}};
    t::TestBatch batch{.length = 1,
                       .nodes = {{1, 0}, {1, 0}, {1, 0}},
                       .buffers = {{},
                                   {t::Values<int32_t>({0, 0})},
                                   {},
                                   {},
                                   {t::Values<int32_t>({1})},
                                   {},
                                   {t::Values<uint64_t>({1})}}};
    WriteFile(dir / "unsigned.arrow", t::MakeFile(schema, {batch}));
  }
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(
      RowsConfig(dir.path(), "EVAL", 0, true, "max_value_bytes: 16")));
  loader.Start();
  EXPECT_EQ(EvalIndexes(loader), (std::vector<int64_t>{0, 1, 3, 5, 7, 8, 9}));
  loader.Stop();
  const StageMetricProto totals = StageTotals(loader, "rows");
  EXPECT_EQ(Skips(totals, "unknown_file_type"), 1u);
  EXPECT_EQ(Skips(totals, "not_arrow"), 2u);
  EXPECT_EQ(Skips(totals, "damaged_file"), 1u);
  EXPECT_EQ(Skips(totals, "missing_column"), 1u);
  EXPECT_EQ(Skips(totals, "unsupported_column_type"), 1u);
  EXPECT_EQ(Skips(totals, "null_value"), 2u);
  EXPECT_EQ(Skips(totals, "value_too_large"), 1u);
  EXPECT_EQ(totals.arrow_source().dataset_files(), 1u);
}

TEST(ArrowSourceTest, StreamFilesAreSurveyedFromTheirMetadata) {
  namespace t = io::arrow::testing;
  TempDir dir;
  const t::TestSchema schema{
      .fields = {t::Int32Field("x"), t::Utf8Field("name")}};
  const auto batch = [](int32_t a, int32_t b) {
    return t::TestBatch{.length = 2,
                        .nodes = {{2, 0}, {2, 0}},
                        .buffers = {{},
                                    {t::Values<int32_t>({a, b})},
                                    {},
                                    {t::Values<int32_t>({0, 1, 3})},
                                    {"abc"}}};
  };
  WriteFile(dir / "a.arrow", t::MakeStream(schema, {batch(1, 2), batch(3, 4)}));
  WriteFile(dir / "b.ipc", t::MakeStream(schema, {batch(5, 6)}));
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(
      "worker_threads: 2 stage { name: 'files' file_path_provider { "
      "directory: '" +
      dir.path() +
      "' mode: ONCE } } stage { name: 'rows' input: 'files' arrow_source { "
      "mode: EVAL readahead: 1 column { name: 'x' } column { name: 'name' } "
      "} }"));
  loader.Start();
  std::vector<std::pair<int64_t, int32_t>> rows;
  while (std::optional<Example> example = NextExample(loader)) {
    const ExampleField* x = example->Find("x");
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->dtype(), DType::kInt32);
    EXPECT_EQ(example->Find("name")->bytes().size(),
              rows.size() % 2 == 0 ? 1u : 2u);
    rows.emplace_back(Int64(*example, "index"), x->scalar<int32_t>());
  }
  EXPECT_EQ(rows, (std::vector<std::pair<int64_t, int32_t>>{
                      {0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}}));
}

TEST(ArrowSourceTest, StopWhileTrainingReturns) {
  TempDir dir;
  WriteDataset(dir);
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(RowsConfig(dir.path(), "TRAIN", 3)));
  loader.Start();
  ASSERT_TRUE(NextExample(loader).has_value());
  loader.Stop();  // the emitter is blocked on a full output
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

TEST(ArrowSourceTest, ConfigErrorsNameTheField) {
  const auto error = [](const std::string& arrow_source) {
    DataLoader loader(CreateStage);
    try {
      loader.Configure(ParseConfig(
          "stage { name: 'files' file_path_provider { directory: '/tmp' } } "
          "stage { name: 'rows' input: 'files' arrow_source { " +
          arrow_source + " } }"));
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error(""), HasSubstr("'arrow_source.column'"));
  EXPECT_THAT(error("column { name: 'a' } column { name: 'b' field: 'a' }"),
              HasSubstr("used twice"));
  EXPECT_THAT(error("column { name: 'index' }"), HasSubstr("used twice"));
  EXPECT_THAT(error("column { name: 'a' } readahead: 0"),
              HasSubstr("'arrow_source.readahead'"));
  EXPECT_THAT(error("column { name: 'a' } block_rows: 4"),
              HasSubstr("'arrow_source.block_rows'"));
  EXPECT_THAT(
      error("column { name: 'a' } output: ROW_BLOCKS block_rows: 2000000"),
      HasSubstr("'arrow_source.block_rows'"));
  DataLoader loader(CreateStage);
  EXPECT_ANY_THROW(loader.Configure(ParseConfig(
      "stage { name: 'n' counting_source { count: 1 } } "
      "stage { name: 'rows' input: 'n' arrow_source { column { name: 'a' } "
      "} }")));
}

}  // namespace
}  // namespace sluice
