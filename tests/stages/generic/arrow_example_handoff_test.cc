// arrow_source's EXAMPLES output hands its examples over in groups (up to
// 64 rows of one record batch under one lock): record batches shorter and
// longer than a group and skipped rows at group edges lose or repeat no
// row; a checkpoint taken while groups are in flight resumes with the
// batches that followed, with a shuffle buffer or the batcher right after
// the source; a checkpoint at the end of a pass resumes into the next; a
// stop while a group is half sent returns.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "gtest/gtest.h"
#include "io/arrow/arrow_file_writer.h"
#include "stages/generic/example.h"
#include "stages/stage_factory.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using testing::ParseConfig;
using testing::StageTotals;
using testing::TempDir;

// Record batch sizes around the group of 64, and the file rows whose label
// is null (skipped): the first and last row of a group, a whole batch's
// first row.
constexpr int64_t kBatchRows[] = {63, 64, 65, 1, 129, 200};
constexpr int64_t kNullRows[] = {0, 63, 127, 128, 191, 192, 321};

// One file "a.arrow" of rows 0..521: label 10 * row, null at kNullRows.
int64_t WriteFile(const TempDir& dir) {
  absl::StatusOr<std::unique_ptr<io::arrow::ArrowFileWriter>> writer =
      io::arrow::ArrowFileWriter::Create(dir / "a.arrow",
                                         {io::arrow::Int64Column("label")});
  EXPECT_TRUE(writer.ok()) << writer.status();
  int64_t first = 0;
  for (int64_t rows : kBatchRows) {
    std::vector<int64_t> labels;
    std::vector<uint8_t> valid((rows + 7) / 8, 0xff);
    for (int64_t r = 0; r < rows; ++r) {
      labels.push_back(10 * (first + r));
      for (int64_t null_row : kNullRows) {
        if (first + r == null_row) valid[r / 8] &= ~(1u << (r % 8));
      }
    }
    EXPECT_TRUE(
        (*writer)
            ->WriteRecordBatch(rows, {{.validity = valid, .int64 = labels}})
            .ok());
    first += rows;
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return first;
}

// The rows read in order: every row but the null ones.
std::vector<int64_t> GoodRows(int64_t rows) {
  std::vector<int64_t> good;
  for (int64_t row = 0; row < rows; ++row) {
    bool null = false;
    for (int64_t null_row : kNullRows) null = null || row == null_row;
    if (!null) good.push_back(row);
  }
  return good;
}

std::string SourceConfig(const TempDir& dir, const std::string& mode,
                         const std::string& extra) {
  return "worker_threads: 2 seed: 5 " + extra +
         " stage { name: 'files' file_path_provider { directory: '" +
         dir.path() +
         "' mode: ONCE } }"
         " stage { name: 'rows' input: 'files' arrow_source { mode: " +
         mode + " column { name: 'label' } } }";
}

// A batcher of batches of 10 rows of index and label, taking `input`.
std::string BatcherConfig(const std::string& input) {
  return " stage { name: 'batches' input: '" + input +
         "' batcher { batch_size: 10 last_batch: KEEP"
         " field { name: 'index' dtype: 'int64' }"
         " field { name: 'label' dtype: 'int64' } } }";
}

// The source, a shuffle buffer and the batcher, deterministic (checkpoints
// name the source's rows).
std::string ShuffledConfig(const TempDir& dir, const std::string& mode) {
  return SourceConfig(dir, mode, "deterministic: true") +
         " stage { name: 'shuffled' input: 'rows' shuffle_buffer { size: 100"
         " min_fill: 30 } }" +
         BatcherConfig("shuffled");
}

// The source straight into the batcher, deterministic (checkpoints resume
// the source at the row after each batch's last).
std::string DirectConfig(const TempDir& dir, const std::string& mode) {
  return SourceConfig(dir, mode, "deterministic: true") + BatcherConfig("rows");
}

// The index column of the next `batches` batches (all: 0), each checked
// against its label.
std::vector<int64_t> TakeIndexes(DataLoader& loader, size_t batches) {
  std::vector<int64_t> indexes;
  for (size_t taken = 0; batches == 0 || taken < batches; ++taken) {
    std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
    if (!batch) break;
    const auto* index = static_cast<const int64_t*>(batch->tensor(0).data);
    const auto* label = static_cast<const int64_t*>(batch->tensor(1).data);
    for (size_t i = 0; i < batch->size(); ++i) {
      EXPECT_EQ(label[i], 10 * index[i]);
      indexes.push_back(index[i]);
    }
  }
  return indexes;
}

TEST(ArrowExampleHandOffTest, GroupEdgesLoseAndRepeatNoRow) {
  TempDir dir;
  const int64_t rows = WriteFile(dir);
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(SourceConfig(dir, "EVAL", "")));
  loader.Start();
  std::vector<int64_t> indexes;
  while (std::optional<Example> example = loader.GetNext<Example>()) {
    const ExampleField* index = example->Find("index");
    const ExampleField* label = example->Find("label");
    ASSERT_NE(index, nullptr);
    ASSERT_NE(label, nullptr);
    EXPECT_EQ(label->scalar<int64_t>(), 10 * index->scalar<int64_t>());
    // Every example names its fields with the same interned names.
    EXPECT_EQ(example->fields().front().first, FieldName("label"));
    indexes.push_back(index->scalar<int64_t>());
  }
  EXPECT_EQ(indexes, GoodRows(rows));
  loader.Stop();
  const StageMetricProto totals = StageTotals(loader, "rows");
  EXPECT_EQ(totals.arrow_source().rows_emitted(), indexes.size());
  ASSERT_EQ(totals.skipped_size(), 1);
  EXPECT_EQ(totals.skipped(0).reason(), "null_value");
  EXPECT_EQ(totals.skipped(0).count(), std::size(kNullRows));
}

// Checkpoints `config` after 7 and after 13 batches (inside groups of the
// source) and expects each resumed run to yield the batches that followed
// in an uninterrupted one; a TRAIN run crosses into a second pass.
void ExpectResumesWhereItWas(const DataLoaderConfig& config,
                             const std::string& mode, size_t rows) {
  const size_t total = mode == "EVAL" ? 0 : rows / 10 + 20;
  std::vector<int64_t> reference;
  {
    DataLoader loader(CreateStage);
    loader.Configure(config);
    loader.Start();
    reference = TakeIndexes(loader, total);
    loader.Stop();
  }
  if (mode == "EVAL") {
    ASSERT_EQ(reference.size(), rows);
  }
  for (size_t cut : {7, 13}) {
    const std::vector<int64_t> before(reference.begin(),
                                      reference.begin() + 10 * cut);
    const std::vector<int64_t> after(reference.begin() + 10 * cut,
                                     reference.end());
    std::string checkpoint;
    {
      DataLoader first(CreateStage);
      first.Configure(config);
      first.Start();
      ASSERT_EQ(TakeIndexes(first, cut), before) << mode;
      checkpoint = first.Checkpoint();
      TakeIndexes(first, 2);  // batches after the checkpoint change nothing
      first.Stop();
    }
    DataLoader resumed(CreateStage);
    resumed.Configure(config);
    resumed.Resume(checkpoint);
    resumed.Start();
    EXPECT_EQ(TakeIndexes(resumed, total == 0 ? 0 : total - cut), after)
        << mode << ", cut after batch " << cut;
    resumed.Stop();
  }
}

TEST(ArrowExampleHandOffTest, ACheckpointInsideAGroupResumesWhereItWas) {
  TempDir dir;
  const size_t rows = GoodRows(WriteFile(dir)).size();
  for (const std::string mode : {"EVAL", "TRAIN"}) {
    ExpectResumesWhereItWas(ParseConfig(ShuffledConfig(dir, mode)), mode, rows);
  }
}

TEST(ArrowExampleHandOffTest, ABatcherRightAfterTheSourceResumesWhereItWas) {
  TempDir dir;
  const size_t rows = GoodRows(WriteFile(dir)).size();
  for (const std::string mode : {"EVAL", "TRAIN"}) {
    ExpectResumesWhereItWas(ParseConfig(DirectConfig(dir, mode)), mode, rows);
  }
}

// A checkpoint taken just as the batcher has consumed a whole pass resumes
// at the end of that pass: the resumed run goes on into the next pass
// instead of taking the empty rest of the pass for an empty data set.
TEST(ArrowExampleHandOffTest, ACheckpointAtTheEndOfAPassResumesIntoTheNext) {
  TempDir dir;
  const size_t rows = GoodRows(WriteFile(dir)).size();
  DataLoaderConfig config = ParseConfig(
      SourceConfig(dir, "TRAIN", "deterministic: true") +
      " stage { name: 'batches' input: 'rows' batcher { batch_size: " +
      std::to_string(rows) +
      " field { name: 'index' dtype: 'int64' }"
      " field { name: 'label' dtype: 'int64' } } }");
  std::string checkpoint;
  {
    DataLoader first(CreateStage);
    first.Configure(config);
    first.Start();
    ASSERT_EQ(TakeIndexes(first, 1).size(), rows);
    checkpoint = first.Checkpoint();
    first.Stop();
  }
  DataLoader resumed(CreateStage);
  resumed.Configure(config);
  resumed.Resume(checkpoint);
  resumed.Start();
  std::vector<int64_t> second_pass = TakeIndexes(resumed, 1);
  resumed.Stop();
  std::sort(second_pass.begin(), second_pass.end());
  EXPECT_EQ(second_pass, GoodRows(rows + std::size(kNullRows)));
}

TEST(ArrowExampleHandOffTest, StopWhileAGroupIsHalfSentReturns) {
  TempDir dir;
  WriteFile(dir);
  // An output of 100 examples: the second group of a pass waits for room
  // after 36 of its 64.
  DataLoaderConfig config = ParseConfig(SourceConfig(dir, "TRAIN", ""));
  config.mutable_stage(1)->add_output()->set_capacity(100);
  DataLoader small(CreateStage);
  small.Configure(config);
  small.Start();
  ASSERT_TRUE(small.GetNext<Example>().has_value());
  small.Stop();  // the emitter is blocked inside a group
}

}  // namespace
}  // namespace sluice
