// Helpers for the batch-queue stage tests: batches tagged with an id,
// queue files and meta.json written directly, loaders built from text.
#ifndef SLUICE_TESTS_STAGES_BATCH_QUEUE_BATCH_QUEUE_TEST_UTIL_H_
#define SLUICE_TESTS_STAGES_BATCH_QUEUE_BATCH_QUEUE_TEST_UTIL_H_

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "gtest/gtest.h"
#include "io/batch_file_meta.h"
#include "io/batch_queue_layout.h"
#include "stages/batch_queue/internal/batch_file.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/stage_factory.h"
#include "tests/stages/lc0/chunk_test_util.h"

namespace sluice::batch_queue::testing {

inline constexpr int kBatchSize = 2;

// An lc0 batch (the tensor generator's five float32 tensors) whose every
// float is `id` (the planes' first float identifies it).
inline TypedBatch MakeBatch(int id, size_t size = kBatchSize) {
  absl::StatusOr<lc0::TensorBatch> batch = lc0::TensorBatch::Create(size);
  EXPECT_TRUE(batch.ok());
  TypedBatch typed = std::move(*batch).ToTypedBatch();
  for (const BatchTensor& tensor : typed.tensors()) {
    std::fill(tensor.As<float>(), tensor.As<float>() + tensor.bytes / 4,
              static_cast<float>(id));
  }
  return typed;
}

// The schema of MakeBatch's batches (lc0's).
inline std::vector<FieldSpec> Lc0Schema() {
  return BatchSchemaOf(MakeBatch(0, 1));
}

// The id of a batch made by MakeBatch; -1 when its tensors disagree.
inline int BatchId(const TypedBatch& batch) {
  const float id = batch.tensor(0).As<float>()[0];
  for (const BatchTensor& tensor : batch.tensors()) {
    for (size_t i = 0; i < tensor.bytes / 4; ++i) {
      if (tensor.As<float>()[i] != id) return -1;
    }
  }
  return static_cast<int>(id);
}

inline void WriteMeta(const std::string& root, int batch_size = kBatchSize) {
  ASSERT_TRUE(MakeDirs(root).ok());
  const DatasetMeta meta{.dataset_name = "test",
                         .training_type = "LC0",
                         .batch_size = batch_size,
                         .batch_schema = Lc0Schema()};
  ASSERT_TRUE(WriteDatasetMeta(root, meta).ok());
}

// Writes batches `ids` as file `sequence` (timestamp `timestamp_ms`) of
// `dir`; returns its name.
inline std::string WriteFile(const std::string& dir, int64_t sequence,
                             const std::vector<int>& ids,
                             int64_t timestamp_ms = 1000) {
  EXPECT_TRUE(MakeDirs(dir).ok());
  std::vector<TypedBatch> batches;
  for (int id : ids) batches.push_back(MakeBatch(id));
  uint64_t bytes = 0;
  absl::StatusOr<std::string> name =
      WriteBatchFile(dir, "train", sequence, timestamp_ms, batches, &bytes);
  EXPECT_TRUE(name.ok()) << name.status();
  return name.value_or("");
}

// Names in `dir` (all entries, sorted).
inline std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A started loader running the text-format DataLoaderConfig `text`.
inline std::unique_ptr<DataLoader> StartLoader(const std::string& text) {
  auto loader = std::make_unique<DataLoader>(CreateStage);
  loader->Configure(lc0::testing::ParseConfig(text));
  loader->Start();
  return loader;
}

// A reader of `root`'s "train" split polling every 5 ms; `extra` is more
// text inside its batch_file_reader block.
inline std::string ReaderStage(
    const std::string& root,
    const std::string& extra = "idle_timeout_ms: 300") {
  return absl::StrCat("stage { name: 'reader' batch_file_reader { root: '",
                      root, "' split: 'train' poll_interval_ms: 5 ", extra,
                      " } }\n");
}

// Ids of every batch until end of stream (a 30 s stall fails the test).
inline std::vector<int> DrainIds(DataLoader& loader) {
  std::vector<int> ids;
  while (true) {
    auto result = loader.GetNextFor<TypedBatch>("", std::chrono::seconds(30));
    if (result.kind != Channel<TypedBatch>::GetResult::Kind::kItem) {
      EXPECT_NE(result.kind, Channel<TypedBatch>::GetResult::Kind::kTimeout);
      return ids;
    }
    ids.push_back(BatchId(*result.item));
  }
}

}  // namespace sluice::batch_queue::testing

#endif  // SLUICE_TESTS_STAGES_BATCH_QUEUE_BATCH_QUEUE_TEST_UTIL_H_
