// The data set and helpers shared by the tests of arrow_source -> batcher
// checkpoints (arrow_block_checkpoint_test.cc, arrow_block_views_first_test
// .cc): three Arrow files of an int64 `label` (row i: 10 i), read in one of
// several ways (SourceKind), straight into a deterministic batcher of
// index, label and seed.
#ifndef SLUICE_TESTS_STAGES_GENERIC_ARROW_BLOCK_TEST_DATA_H_
#define SLUICE_TESTS_STAGES_GENERIC_ARROW_BLOCK_TEST_DATA_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "engine/checkpoint.h"
#include "engine/data_loader.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice::arrow_block_testing {

// Three files; per file its record batch sizes. Row i of the data set
// (its index) has label 10 i.
inline const std::vector<std::vector<int64_t>> kFiles = {
    {17, 23, 1}, {30, 12}, {9, 26, 19}};
inline constexpr int64_t kRows = 137;
// Rows whose label is null (skipped) when the data set has nulls: they end
// blocks, one a one-row record batch.
inline constexpr int64_t kNullRows[] = {5, 40, 41, 90, 136};
inline constexpr uint64_t kSeed = 5;
inline constexpr size_t kBatchSize = 10;

// One way of reading the data set.
struct SourceKind {
  std::string name;
  std::string output;   // EXAMPLES or ROW_BLOCKS
  uint32_t block_rows;  // 0: unset
  // The data set has null labels: record batch reads only.
  bool nulls;
  // The batcher's block_order: IN_ORDER or VIEWS_FIRST.
  std::string block_order = "IN_ORDER";
};

inline bool ViewsFirst(const SourceKind& kind) {
  return kind.block_order == "VIEWS_FIRST";
}

void PrintTo(const SourceKind& kind, std::ostream* out);

inline const SourceKind kExamples = {"examples", "EXAMPLES", 0, true};
// Blocks of record batches, cut at the null rows.
inline const SourceKind kRecordBatchBlocks = {"record_batch_blocks",
                                              "ROW_BLOCKS", 0, true};
// Blocks of 7 rows read straight from the files: batches of 10 end inside
// blocks.
inline const SourceKind kBlocksOf7 = {"blocks_of_7", "ROW_BLOCKS", 7, false};
// Blocks of the batcher's batch size: batches end at blocks' ends.
inline const SourceKind kBlocksOfABatch = {"blocks_of_a_batch", "ROW_BLOCKS", 0,
                                           false};
// VIEWS_FIRST over blocks of record batches cut at the null rows: batches
// of 10 are views while they fit, the rest of each block (1 to 9 rows)
// waits in the batch being filled.
inline const SourceKind kViewsFirstRecordBatches = {
    "views_first_record_batches", "ROW_BLOCKS", 0, true, "VIEWS_FIRST"};
// VIEWS_FIRST over blocks of 16 read straight from the files (no nulls):
// a view and 6 rows held per whole block, and the blocks cut at files'
// ends.
inline const SourceKind kViewsFirstBlocksOf16 = {
    "views_first_blocks_of_16", "ROW_BLOCKS", 16, false, "VIEWS_FIRST"};
// VIEWS_FIRST over blocks of the batch size: blocks end on batch ends, so
// the batches are those of IN_ORDER.
inline const SourceKind kViewsFirstBlocksOfABatch = {
    "views_first_blocks_of_a_batch", "ROW_BLOCKS", 0, false, "VIEWS_FIRST"};

// Whether row `row` has a null label in `kind`'s data set.
bool IsNull(const SourceKind& kind, int64_t row);
// Writes the data set (a.arrow, b.arrow, c.arrow) into `dir`.
void WriteData(const testing::TempDir& dir, const SourceKind& kind);
// Every row an eval pass reads, in order.
std::vector<int64_t> GoodRows(const SourceKind& kind);
// The source straight into a batcher of index, label and seed,
// deterministic.
DataLoaderConfig Config(const testing::TempDir& dir, const SourceKind& kind,
                        const std::string& mode,
                        size_t batch_size = kBatchSize);
DataLoaderConfig OfRank(DataLoaderConfig config, uint32_t rank,
                        uint32_t world_size);

// A delivered row: its index and the pass it was read in (from its seed).
struct Row {
  int64_t index = 0;
  uint64_t pass = 0;
  auto operator<=>(const Row&) const = default;
};

// The rows of the next `batches` batches (all: 0), each checked against
// its label.
std::vector<Row> TakeRows(DataLoader& loader, size_t batches);
// A started loader of `config`, resumed from `checkpoints` when given.
std::unique_ptr<DataLoader> Started(
    const DataLoaderConfig& config,
    const std::vector<std::string>& checkpoints = {});
std::vector<int64_t> SortedIndexes(const std::vector<Row>& rows);

struct RankCounts {
  uint32_t old_ranks;
  uint32_t new_ranks;
};
// Rank k of cuts.size() takes cuts[k] batches, then checkpoints; returns
// the rows they delivered and their checkpoints.
std::vector<Row> RunOldRanks(const DataLoaderConfig& config,
                             const std::vector<size_t>& cuts,
                             std::vector<std::string>& checkpoints);
// The batches of the new ranks, by rank: up to `batches` each (0: all).
std::vector<std::vector<Row>> RunNewRanks(
    const DataLoaderConfig& config, uint32_t ranks,
    const std::vector<std::string>& checkpoints, size_t batches);

// The rows the batcher of `checkpoint` held (block_order VIEWS_FIRST), in
// their slot order.
std::vector<ItemRef> HeldRows(const std::string& checkpoint);
// The file numbers (in sorted order) of `refs` (arrow_source's unit: pass
// << 32 | file number).
std::set<uint32_t> FilesOf(const std::vector<ItemRef>& refs);

}  // namespace sluice::arrow_block_testing

#endif  // SLUICE_TESTS_STAGES_GENERIC_ARROW_BLOCK_TEST_DATA_H_
