// arrow_source's EXAMPLES output: every row once and in order (EVAL), a
// seeded order per pass (TRAIN), a stable index, views that outlive the
// pipeline; damaged files and rows counted and skipped; a stop while
// training; config errors. The ROW_BLOCKS output:
// arrow_source_blocks_test.cc.
#include "stages/generic/arrow_source.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/data_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/arrow/arrow_file_writer.h"
#include "io/async_file_reader.h"
#include "io/direct_file.h"
#include "stages/stage_factory.h"
#include "tests/io/arrow/ipc_test_writer.h"
#include "tests/stages/generic/arrow_source_test_data.h"
#include "tests/testing/npz_reader.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::sluice::arrow_source_testing::EvalIndexes;
using ::sluice::arrow_source_testing::ExpectRowValues;
using ::sluice::arrow_source_testing::IndexesUpTo;
using ::sluice::arrow_source_testing::Int64;
using ::sluice::arrow_source_testing::kTotalRows;
using ::sluice::arrow_source_testing::NextExample;
using ::sluice::arrow_source_testing::RowsConfig;
using ::sluice::arrow_source_testing::Skips;
using ::sluice::arrow_source_testing::WriteArrowFile;
using ::sluice::arrow_source_testing::WriteDataset;
using ::testing::HasSubstr;
using testing::ParseConfig;
using testing::ReadFileToString;
using testing::StageTotals;
using testing::TempDir;
using testing::TmpfsDirectory;
using testing::WriteFile;

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

// direct_io: the same rows, record batches read past the page cache (in
// examples and in row blocks); where the file system refuses O_DIRECT
// (tmpfs at /dev/shm), read buffered and each opening counted.
TEST(ArrowSourceTest, DirectIoYieldsTheSameRowsAndCountsRefusals) {
  for (const bool in_memory : {false, true}) {
    if (in_memory && TmpfsDirectory().empty()) continue;
    SCOPED_TRACE(in_memory ? "tmpfs" : "temp dir");
    const TempDir dir(in_memory ? TmpfsDirectory() : "");
    WriteDataset(dir);
    absl::StatusOr<io::ReadableFile> probe =
        io::OpenForReading(dir / "part-0.arrow", /*direct=*/true);
    ASSERT_TRUE(probe.ok()) << probe.status();
    close(probe->fd);
    const bool refused = !probe->refusal.empty();
    EXPECT_TRUE(refused || !in_memory);
    for (const char* output : {"", "output: ROW_BLOCKS block_rows: 4"}) {
      SCOPED_TRACE(output);
      DataLoader loader(CreateStage);
      loader.Configure(
          ParseConfig(RowsConfig(dir.path(), "EVAL", 5, true,
                                 std::string("direct_io: true ") + output)));
      loader.Start();
      if (std::string_view(output).empty()) {
        EXPECT_EQ(EvalIndexes(loader), IndexesUpTo(kTotalRows));
      } else {
        int64_t rows = 0;
        while (true) {
          auto got =
              loader.GetNextFor<ExampleBlock>("", std::chrono::seconds(60));
          if (!got.item) break;
          rows += got.item->rows();
        }
        EXPECT_EQ(rows, kTotalRows);
      }
      loader.Stop();
      const StageMetricProto totals = StageTotals(loader, "rows");
      EXPECT_EQ(totals.skipped_size(), 0);
      EXPECT_EQ(totals.arrow_source().direct_io_refused(), refused ? 4u : 0u);
      const DataLoaderMetricsProto metrics = loader.GetMetrics();
      EXPECT_EQ(metrics.reads_bounced_for_direct_io() > 0, !refused)
          << metrics.DebugString();
    }
  }
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
