// Checkpoints of arrow_source -> batcher in deterministic mode, with the
// source's output in blocks (ROW_BLOCKS: a block per run of good rows of a
// record batch, or blocks of block_rows read straight from the file) and,
// as the reference, one Example per row. For each: a checkpoint after any
// batch (inside a block, at a block's end, at the end of a pass) resumes
// with the batches an uninterrupted run gives, which are those of the
// EXAMPLES output; an eval pass delivers every row once across the resume;
// an elastic resume 2 -> 3, 3 -> 2 and 2 -> 1 ranks delivers every row no
// old rank delivered once (eval) and repeats no row within the interrupted
// pass (training), its batches a function of the checkpoints; without
// deterministic mode (resumable) an eval pass still loses and repeats
// nothing. A checkpoint
// with block_order VIEWS_FIRST is refused naming the batcher and the
// field; an EXAMPLES checkpoint is refused by a ROW_BLOCKS config (another
// config), while its source state resumes blocks as it resumes examples.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "engine/pipeline.h"
#include "engine/typed_batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/arrow/arrow_file_writer.h"
#include "stages/stage_factory.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice::arrow_block_checkpoint_test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::ParseConfig;
using testing::TempDir;

// Three files; per file its record batch sizes. Row i of the data set
// (its index) has label 10 i.
const std::vector<std::vector<int64_t>> kFiles = {
    {17, 23, 1}, {30, 12}, {9, 26, 19}};
constexpr int64_t kRows = 137;
// Rows whose label is null (skipped) when the data set has nulls: they end
// blocks, one a one-row record batch.
constexpr int64_t kNullRows[] = {5, 40, 41, 90, 136};
constexpr uint64_t kSeed = 5;
constexpr size_t kBatchSize = 10;

// One way of reading the data set.
struct SourceKind {
  std::string name;
  std::string output;   // EXAMPLES or ROW_BLOCKS
  uint32_t block_rows;  // 0: unset
  // The data set has null labels: record batch reads only.
  bool nulls;
};

void PrintTo(const SourceKind& kind, std::ostream* out) { *out << kind.name; }

const SourceKind kExamples = {"examples", "EXAMPLES", 0, true};
// Blocks of record batches, cut at the null rows.
const SourceKind kRecordBatchBlocks = {"record_batch_blocks", "ROW_BLOCKS", 0,
                                       true};
// Blocks of 7 rows read straight from the files: batches of 10 end inside
// blocks.
const SourceKind kBlocksOf7 = {"blocks_of_7", "ROW_BLOCKS", 7, false};
// Blocks of the batcher's batch size: batches end at blocks' ends.
const SourceKind kBlocksOfABatch = {"blocks_of_a_batch", "ROW_BLOCKS", 0,
                                    false};

bool IsNull(const SourceKind& kind, int64_t row) {
  return kind.nulls && std::find(std::begin(kNullRows), std::end(kNullRows),
                                 row) != std::end(kNullRows);
}

void WriteData(const TempDir& dir, const SourceKind& kind) {
  int64_t first = 0;
  for (size_t f = 0; f < kFiles.size(); ++f) {
    absl::StatusOr<std::unique_ptr<io::arrow::ArrowFileWriter>> writer =
        io::arrow::ArrowFileWriter::Create(
            dir / (std::string(1, static_cast<char>('a' + f)) + ".arrow"),
            {io::arrow::Int64Column("label")});
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (const int64_t rows : kFiles[f]) {
      std::vector<int64_t> labels;
      std::vector<uint8_t> valid((rows + 7) / 8, 0xff);
      for (int64_t r = 0; r < rows; ++r) {
        labels.push_back(10 * (first + r));
        if (IsNull(kind, first + r)) valid[r / 8] &= ~(1u << (r % 8));
      }
      ASSERT_TRUE(
          (*writer)
              ->WriteRecordBatch(rows, {{.validity = valid, .int64 = labels}})
              .ok());
      first += rows;
    }
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  ASSERT_EQ(first, kRows);
}

// Every row an eval pass reads, in order.
std::vector<int64_t> GoodRows(const SourceKind& kind) {
  std::vector<int64_t> rows;
  for (int64_t row = 0; row < kRows; ++row) {
    if (!IsNull(kind, row)) rows.push_back(row);
  }
  return rows;
}

// The source straight into a batcher of index, label and seed,
// deterministic; `output` overrides the kind's.
DataLoaderConfig Config(const TempDir& dir, const SourceKind& kind,
                        const std::string& mode, size_t batch_size = kBatchSize,
                        const std::string& block_order = "IN_ORDER") {
  std::string source =
      "mode: " + mode + " output: " + kind.output + " column { name: 'label' }";
  if (kind.block_rows > 0) {
    source += " block_rows: " + std::to_string(kind.block_rows);
  }
  return ParseConfig(
      "worker_threads: 2 deterministic: true seed: " + std::to_string(kSeed) +
      " stage { name: 'files' file_path_provider { directory: '" + dir.path() +
      "' mode: ONCE } }"
      " stage { name: 'rows' input: 'files' arrow_source { " +
      source +
      " } }"
      " stage { name: 'batches' input: 'rows' batcher { batch_size: " +
      std::to_string(batch_size) +
      " last_batch: KEEP block_order: " + block_order +
      " field { name: 'index' dtype: 'int64' }"
      " field { name: 'label' dtype: 'int64' }"
      " field { name: 'seed' dtype: 'int64' } } }");
}

DataLoaderConfig OfRank(DataLoaderConfig config, uint32_t rank,
                        uint32_t world_size) {
  config.set_rank(rank);
  config.set_world_size(world_size);
  return config;
}

// A delivered row: its index and the pass it was read in (from its seed).
struct Row {
  int64_t index = 0;
  uint64_t pass = 0;
  auto operator<=>(const Row&) const = default;
};

// The rows of the next `batches` batches (all: 0), each checked against
// its label.
std::vector<Row> TakeRows(DataLoader& loader, size_t batches) {
  std::vector<Row> rows;
  for (size_t taken = 0; batches == 0 || taken < batches; ++taken) {
    std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
    if (!batch) break;
    const auto* index = static_cast<const int64_t*>(batch->tensor(0).data);
    const auto* label = static_cast<const int64_t*>(batch->tensor(1).data);
    const auto* seed = static_cast<const int64_t*>(batch->tensor(2).data);
    for (size_t i = 0; i < batch->size(); ++i) {
      EXPECT_EQ(label[i], 10 * index[i]);
      const uint64_t pass = seed[i] == 0
                                ? 0
                                : static_cast<uint64_t>(seed[i]) - kSeed -
                                      static_cast<uint64_t>(index[i]);
      rows.push_back({.index = index[i], .pass = pass});
    }
  }
  return rows;
}

// A started loader of `config`, resumed from `checkpoints` when given.
std::unique_ptr<DataLoader> Started(
    const DataLoaderConfig& config,
    const std::vector<std::string>& checkpoints = {}) {
  auto loader = std::make_unique<DataLoader>(CreateStage);
  loader->Configure(config);
  if (checkpoints.size() == 1) loader->Resume(checkpoints.front());
  if (checkpoints.size() > 1) loader->Resume(checkpoints);
  loader->Start();
  return loader;
}

std::vector<int64_t> SortedIndexes(const std::vector<Row>& rows) {
  std::vector<int64_t> indexes;
  for (const Row& row : rows) indexes.push_back(row.index);
  std::sort(indexes.begin(), indexes.end());
  return indexes;
}

class ArrowBlockCheckpointTest : public ::testing::TestWithParam<SourceKind> {};

// Eval: 14 batches (the last of 2 or 7 rows); training: 30 batches, more
// than two passes. The cuts fall inside blocks (record batches of 17 and
// 23 rows; blocks of 7), at blocks' ends (blocks of a batch), at a pass's
// last full batch and in the second pass.
TEST_P(ArrowBlockCheckpointTest, ResumesWithTheBatchesOfAnUninterruptedRun) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  for (const std::string mode : {"EVAL", "TRAIN"}) {
    const size_t total = mode == "EVAL" ? 0 : 30;
    const DataLoaderConfig config = Config(dir, kind, mode);
    const std::vector<Row> reference = TakeRows(*Started(config), total);
    SourceKind examples = kind;
    examples.output = "EXAMPLES";
    examples.block_rows = 0;
    EXPECT_EQ(TakeRows(*Started(Config(dir, examples, mode)), total), reference)
        << mode << ": the batches of the EXAMPLES output";
    if (mode == "EVAL") {
      EXPECT_EQ(SortedIndexes(reference), GoodRows(kind));
    } else {
      ASSERT_EQ(reference.size(), total * kBatchSize);
      EXPECT_EQ(reference.back().pass, 2u);
    }
    for (const size_t cut : {1, 4, 9, 13, 20}) {
      if (mode == "EVAL" && cut > 13) continue;
      const std::vector<Row> before(reference.begin(),
                                    reference.begin() + kBatchSize * cut);
      const std::vector<Row> after(reference.begin() + kBatchSize * cut,
                                   reference.end());
      std::string checkpoint;
      {
        std::unique_ptr<DataLoader> first = Started(config);
        ASSERT_EQ(TakeRows(*first, cut), before) << mode << " " << cut;
        checkpoint = first->Checkpoint();
        TakeRows(*first, 2);  // batches after the checkpoint change nothing
      }
      EXPECT_EQ(TakeRows(*Started(config, {checkpoint}),
                         total == 0 ? 0 : total - cut),
                after)
          << mode << ", cut after batch " << cut;
    }
  }
}

// A checkpoint taken just as the batcher has consumed a whole pass resumes
// into the next pass.
TEST_P(ArrowBlockCheckpointTest, ACheckpointAtTheEndOfAPassResumesIntoTheNext) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  const std::vector<int64_t> good = GoodRows(kind);
  const DataLoaderConfig config = Config(dir, kind, "TRAIN", good.size());
  std::string checkpoint;
  {
    std::unique_ptr<DataLoader> first = Started(config);
    const std::vector<Row> pass = TakeRows(*first, 1);
    ASSERT_EQ(SortedIndexes(pass), good);
    checkpoint = first->Checkpoint();
  }
  const std::vector<Row> next = TakeRows(*Started(config, {checkpoint}), 1);
  EXPECT_EQ(SortedIndexes(next), good);
  for (const Row& row : next) EXPECT_EQ(row.pass, 1u) << row.index;
}

// Without deterministic mode (resumable: true) an eval pass delivers every
// row once across a resume.
TEST_P(ArrowBlockCheckpointTest, ResumableEvalPassRepeatsAndLosesNothing) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  DataLoaderConfig config = Config(dir, kind, "EVAL");
  config.set_deterministic(false);
  config.set_resumable(true);
  std::string checkpoint;
  std::vector<Row> rows;
  {
    std::unique_ptr<DataLoader> first = Started(config);
    rows = TakeRows(*first, 6);
    checkpoint = first->Checkpoint();
  }
  const std::vector<Row> after = TakeRows(*Started(config, {checkpoint}), 0);
  rows.insert(rows.end(), after.begin(), after.end());
  EXPECT_EQ(SortedIndexes(rows), GoodRows(kind));
}

struct RankCounts {
  uint32_t old_ranks;
  uint32_t new_ranks;
};
// 2 -> 1 reads blocks of block_rows straight from the files (one rank).
constexpr RankCounts kRankCounts[] = {{2, 3}, {3, 2}, {2, 1}};

// Rank k of cuts.size() takes cuts[k] batches, then checkpoints; returns
// the rows they delivered and their checkpoints.
std::vector<Row> RunOldRanks(const DataLoaderConfig& config,
                             const std::vector<size_t>& cuts,
                             std::vector<std::string>& checkpoints) {
  std::vector<Row> rows;
  const auto ranks = static_cast<uint32_t>(cuts.size());
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    std::unique_ptr<DataLoader> loader = Started(OfRank(config, rank, ranks));
    const std::vector<Row> taken = TakeRows(*loader, cuts[rank]);
    rows.insert(rows.end(), taken.begin(), taken.end());
    checkpoints.push_back(loader->Checkpoint());
  }
  return rows;
}

// The batches of the new ranks, by rank: up to `batches` each (0: all).
std::vector<std::vector<Row>> RunNewRanks(
    const DataLoaderConfig& config, uint32_t ranks,
    const std::vector<std::string>& checkpoints, size_t batches) {
  std::vector<std::vector<Row>> rows;
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    rows.push_back(
        TakeRows(*Started(OfRank(config, rank, ranks), checkpoints), batches));
  }
  return rows;
}

// Each old rank stops inside its share (of 45 rows or more) after 1 to 3
// batches.
std::vector<size_t> OldCuts(uint32_t ranks) {
  std::vector<size_t> cuts;
  for (uint32_t rank = 0; rank < ranks; ++rank) cuts.push_back(1 + rank % 3);
  return cuts;
}

TEST_P(ArrowBlockCheckpointTest, ElasticEvalDeliversEveryRowOnce) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  const DataLoaderConfig config = Config(dir, kind, "EVAL");
  for (const RankCounts counts : kRankCounts) {
    std::vector<std::string> checkpoints;
    std::vector<Row> rows =
        RunOldRanks(config, OldCuts(counts.old_ranks), checkpoints);
    for (const std::vector<Row>& rank_rows :
         RunNewRanks(config, counts.new_ranks, checkpoints, 0)) {
      rows.insert(rows.end(), rank_rows.begin(), rank_rows.end());
    }
    EXPECT_EQ(SortedIndexes(rows), GoodRows(kind))
        << counts.old_ranks << " -> " << counts.new_ranks << " ranks";
  }
}

// Training: within the interrupted pass (pass 0) every row is delivered
// once, by an old rank or a new one, and a new rank's batches are the same
// each time it resumes from the same checkpoints.
TEST_P(ArrowBlockCheckpointTest, ElasticTrainingRepeatsNoRowOfThePass) {
  const SourceKind& kind = GetParam();
  TempDir dir;
  WriteData(dir, kind);
  const DataLoaderConfig config = Config(dir, kind, "TRAIN");
  for (const RankCounts counts : kRankCounts) {
    std::vector<std::string> checkpoints;
    std::vector<Row> pass_rows =
        RunOldRanks(config, OldCuts(counts.old_ranks), checkpoints);
    // Enough batches per new rank to finish the pass.
    const size_t batches = kRows / kBatchSize + 2;
    const std::vector<std::vector<Row>> resumed =
        RunNewRanks(config, counts.new_ranks, checkpoints, batches);
    for (const std::vector<Row>& rank_rows : resumed) {
      for (const Row& row : rank_rows) {
        if (row.pass == 0) pass_rows.push_back(row);
      }
    }
    EXPECT_EQ(SortedIndexes(pass_rows), GoodRows(kind))
        << counts.old_ranks << " -> " << counts.new_ranks << " ranks";
    EXPECT_EQ(RunNewRanks(config, counts.new_ranks, checkpoints, batches),
              resumed)
        << counts.old_ranks << " -> " << counts.new_ranks << " ranks";
  }
}

INSTANTIATE_TEST_SUITE_P(Outputs, ArrowBlockCheckpointTest,
                         ::testing::Values(kExamples, kRecordBatchBlocks,
                                           kBlocksOf7, kBlocksOfABatch),
                         [](const ::testing::TestParamInfo<SourceKind>& info) {
                           return info.param.name;
                         });

TEST(ArrowBlockCheckpointRefusalTest, ViewsFirstIsRefusedNamingTheField) {
  TempDir dir;
  WriteData(dir, kRecordBatchBlocks);
  std::unique_ptr<DataLoader> loader = Started(
      Config(dir, kRecordBatchBlocks, "TRAIN", kBatchSize, "VIEWS_FIRST"));
  TakeRows(*loader, 3);
  try {
    loader->Checkpoint();
    ADD_FAILURE() << "a VIEWS_FIRST batcher was checkpointed";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), AllOf(HasSubstr("'batches'"),
                                    HasSubstr("block_order: VIEWS_FIRST")));
  }
  // The run goes on.
  EXPECT_EQ(TakeRows(*loader, 20).size(), 20 * kBatchSize);
}

// An EXAMPLES checkpoint: a config with output ROW_BLOCKS is another
// config, refused naming the field; the source's state is the same for
// both outputs, so the checkpoint with its config's output changed resumes
// with the batches that followed.
TEST(ArrowBlockCheckpointRefusalTest, AnExamplesCheckpointAndBlocks) {
  TempDir dir;
  WriteData(dir, kExamples);
  const DataLoaderConfig examples = Config(dir, kExamples, "TRAIN");
  const DataLoaderConfig blocks = Config(dir, kRecordBatchBlocks, "TRAIN");
  const std::vector<Row> reference = TakeRows(*Started(examples), 20);
  std::string checkpoint;
  {
    std::unique_ptr<DataLoader> first = Started(examples);
    TakeRows(*first, 7);
    checkpoint = first->Checkpoint();
  }
  DataLoader refusing(CreateStage);
  refusing.Configure(blocks);
  try {
    refusing.Resume(checkpoint);
    ADD_FAILURE() << "an EXAMPLES checkpoint resumed a ROW_BLOCKS config";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(),
                AllOf(HasSubstr("another config"), HasSubstr("output")));
  }
  absl::StatusOr<LoaderCheckpoint> parsed = ParseCheckpoint(checkpoint);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  parsed->mutable_config()
      ->mutable_stage(1)
      ->mutable_arrow_source()
      ->set_output(ArrowSourceConfig::ROW_BLOCKS);
  EXPECT_EQ(
      TakeRows(*Started(blocks, {SerializeCheckpoint(*parsed)}), 13),
      std::vector<Row>(reference.begin() + 7 * kBatchSize, reference.end()));
}

}  // namespace
}  // namespace sluice::arrow_block_checkpoint_test
