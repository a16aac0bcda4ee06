#include "stages/generic/internal/arrow_dataset.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "engine/rank_shard.h"
#include "engine/stable_hash.h"

namespace sluice {

using io::arrow::ArrayView;
using io::arrow::RecordBatch;

namespace {

int64_t ValueBytes(const ArrayView& array) {
  int64_t bytes = static_cast<int64_t>(array.validity_bytes().size() +
                                       array.values_bytes().size());
  for (size_t i = 0; i < array.num_children(); ++i) {
    bytes += ValueBytes(array.child(i));
  }
  return bytes;
}

}  // namespace

std::vector<const ArrowDatasetFile*> FilesOfPass(const ArrowDataset& dataset,
                                                 bool train,
                                                 uint64_t pass_seed) {
  std::vector<const ArrowDatasetFile*> order;
  for (const auto& file : dataset) order.push_back(file.get());
  if (train) {
    StableRandom random(pass_seed);
    for (size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[random.Below(i)]);
    }
  }
  return order;
}

std::pair<int64_t, int64_t> RankRowsOfBatch(const ArrowLoadedBatch& loaded,
                                            uint32_t rank,
                                            uint32_t world_size) {
  if (loaded.read.to_row >= 0) {
    const int64_t begin = std::clamp<int64_t>(
        loaded.read.from_row - loaded.first_row, 0, loaded.rows);
    const int64_t end = std::clamp<int64_t>(
        loaded.read.to_row - loaded.first_row, begin, loaded.rows);
    return {begin, end};
  }
  if (world_size <= 1) return {0, loaded.rows};
  const RowRange mine =
      RowsOfRank(std::filesystem::path(loaded.file->path).filename().string(),
                 static_cast<uint64_t>(loaded.file->rows), rank, world_size);
  const auto first = static_cast<uint64_t>(loaded.first_row);
  const auto last = first + static_cast<uint64_t>(loaded.rows);
  const uint64_t begin = std::clamp(mine.begin, first, last);
  const uint64_t end = std::clamp(mine.end, begin, last);
  return {static_cast<int64_t>(begin - first),
          static_cast<int64_t>(end - first)};
}

std::optional<std::vector<int64_t>> RestoredRowsOfBatch(
    const ArrowFileRead& read, int64_t first_row, int64_t rows) {
  if (read.only_rows == nullptr) return std::nullopt;
  const int64_t end = first_row + rows;
  std::vector<int64_t> wanted;
  for (auto it = std::lower_bound(read.only_rows->begin(),
                                  read.only_rows->end(), first_row);
       it != read.only_rows->end() && *it < end; ++it) {
    wanted.push_back(*it - first_row);
  }
  return wanted;
}

std::shared_ptr<const RecordBatch> ShareRecordBatch(
    RecordBatch batch, std::shared_ptr<ArrowBufferPool> pool, unsigned home) {
  auto* owned = new RecordBatch(std::move(batch));
  return std::shared_ptr<const RecordBatch>(
      owned, [pool = std::move(pool), home](const RecordBatch* done) {
        pool->Give(std::move(*const_cast<RecordBatch*>(done)).TakeBuffer(),
                   home);
        delete done;
      });
}

int64_t RecordBatchValueBytes(const RecordBatch& batch) {
  int64_t bytes = 0;
  for (const ArrayView& column : batch.columns()) bytes += ValueBytes(column);
  return bytes;
}

}  // namespace sluice
