#include "tests/stages/generic/arrow_block_test_data.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/status/statusor.h"
#include "engine/pipeline.h"
#include "engine/typed_batch.h"
#include "gtest/gtest.h"
#include "io/arrow/arrow_file_writer.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/stage_factory.h"

namespace sluice::arrow_block_testing {

using testing::ParseConfig;
using testing::TempDir;

void PrintTo(const SourceKind& kind, std::ostream* out) { *out << kind.name; }

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

std::vector<int64_t> GoodRows(const SourceKind& kind) {
  std::vector<int64_t> rows;
  for (int64_t row = 0; row < kRows; ++row) {
    if (!IsNull(kind, row)) rows.push_back(row);
  }
  return rows;
}

DataLoaderConfig Config(const TempDir& dir, const SourceKind& kind,
                        const std::string& mode, size_t batch_size) {
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
      " last_batch: KEEP block_order: " + kind.block_order +
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

std::unique_ptr<DataLoader> Started(
    const DataLoaderConfig& config,
    const std::vector<std::string>& checkpoints) {
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

std::vector<ItemRef> HeldRows(const std::string& checkpoint) {
  absl::StatusOr<LoaderCheckpoint> parsed = ParseCheckpoint(checkpoint);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  std::vector<ItemRef> held;
  if (!parsed.ok()) return held;
  for (const StageCheckpoint& stage : parsed->stage()) {
    if (stage.name() != "batches") continue;
    BatcherCheckpoint batcher;
    EXPECT_TRUE(batcher.ParseFromString(stage.state()));
    for (int i = 0; i < batcher.held().unit_size(); ++i) {
      held.push_back(
          {.unit = batcher.held().unit(i), .index = batcher.held().index(i)});
    }
  }
  return held;
}

std::set<uint32_t> FilesOf(const std::vector<ItemRef>& refs) {
  std::set<uint32_t> files;
  for (const ItemRef& ref : refs) files.insert(static_cast<uint32_t>(ref.unit));
  return files;
}

}  // namespace sluice::arrow_block_testing
