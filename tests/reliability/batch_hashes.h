// Helpers of the whole-pipeline reproducibility tests (determinism_test,
// checkpoint_test): batch hashes, a running loader and thread shapes.
#ifndef SLUICE_TESTS_RELIABILITY_BATCH_HASHES_H_
#define SLUICE_TESTS_RELIABILITY_BATCH_HASHES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/data_loader.h"
#include "engine/stable_hash.h"
#include "engine/typed_batch.h"
#include "stages/stage_factory.h"
#include "tests/testing/byte_hash.h"

namespace sluice {

// The hash of a batch: every tensor's name, dtype, shape and bytes.
inline uint64_t BatchHash(const TypedBatch& batch) {
  uint64_t hash = Fnv1a64("batch");
  for (const BatchTensor& tensor : batch.tensors()) {
    hash = HashCombine(hash, Fnv1a64(tensor.name));
    hash = HashCombine(hash, static_cast<uint64_t>(tensor.dtype));
    for (int64_t dimension : tensor.shape) {
      hash = HashCombine(hash, static_cast<uint64_t>(dimension));
    }
    hash = HashCombine(hash, testing::HashBytes(testing::kByteHashStart,
                                                tensor.data, tensor.bytes));
  }
  return hash;
}

// The hash of each example (row) of a batch: its bytes in every tensor.
inline std::vector<uint64_t> RowHashes(const TypedBatch& batch) {
  std::vector<uint64_t> rows(batch.size(), Fnv1a64("row"));
  for (const BatchTensor& tensor : batch.tensors()) {
    size_t row_bytes = DTypeSize(tensor.dtype);
    for (size_t d = 1; d < tensor.shape.size(); ++d) {
      row_bytes *= static_cast<size_t>(tensor.shape[d]);
    }
    const char* data = static_cast<const char*>(tensor.data);
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i] = HashCombine(
          rows[i], testing::HashBytes(testing::kByteHashStart,
                                      data + i * row_bytes, row_bytes));
    }
  }
  return rows;
}

// The int64 tensor `field` of each example of a batch (an id its source
// gives every row, like arrow_source's `index`); RowHashes when `field` is
// empty.
inline std::vector<uint64_t> RowIds(const TypedBatch& batch,
                                    std::string_view field) {
  if (field.empty()) return RowHashes(batch);
  std::vector<uint64_t> ids;
  const BatchTensor* tensor = batch.Find(field);
  if (tensor == nullptr || tensor->dtype != DType::kInt64) return ids;
  for (size_t i = 0; i < batch.size(); ++i) {
    ids.push_back(static_cast<uint64_t>(tensor->As<int64_t>()[i]));
  }
  return ids;
}

// The hashes of the first `limit` batches (all of them for a finite
// pipeline: limit 0).
inline std::vector<uint64_t> BatchHashes(const DataLoaderConfig& config,
                                         size_t limit) {
  DataLoader loader(CreateStage);
  loader.Configure(config);
  loader.Start();
  std::vector<uint64_t> hashes;
  while (limit == 0 || hashes.size() < limit) {
    std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
    if (!batch) break;
    hashes.push_back(BatchHash(*batch));
  }
  loader.Stop();
  return hashes;
}

// A deterministic loader, started, optionally resumed first.
class RunningLoader {
 public:
  explicit RunningLoader(const DataLoaderConfig& config,
                         const std::string* resume_from = nullptr)
      : loader_(CreateStage) {
    loader_.Configure(config);
    if (resume_from != nullptr) loader_.Resume(*resume_from);
    loader_.Start();
  }
  // Resumed from the checkpoints of every rank of a run.
  RunningLoader(const DataLoaderConfig& config,
                const std::vector<std::string>& resume_from)
      : loader_(CreateStage) {
    loader_.Configure(config);
    loader_.Resume(resume_from);
    loader_.Start();
  }
  // Hashes of the next `count` batches (fewer at end of stream; 0: all).
  std::vector<uint64_t> Take(size_t count) {
    std::vector<uint64_t> hashes;
    while (count == 0 || hashes.size() < count) {
      std::optional<TypedBatch> batch = loader_.GetNext<TypedBatch>();
      if (!batch) break;
      hashes.push_back(BatchHash(*batch));
    }
    return hashes;
  }
  // Row ids (RowIds; by default hashes) of the next `count` batches (0:
  // all).
  std::vector<uint64_t> TakeRows(size_t count, std::string_view id_field = "") {
    std::vector<uint64_t> rows;
    for (size_t taken = 0; count == 0 || taken < count; ++taken) {
      std::optional<TypedBatch> batch = loader_.GetNext<TypedBatch>();
      if (!batch) break;
      const std::vector<uint64_t> more = RowIds(*batch, id_field);
      rows.insert(rows.end(), more.begin(), more.end());
    }
    return rows;
  }
  std::string Checkpoint() { return loader_.Checkpoint(); }
  DataLoader& loader() { return loader_; }

 private:
  DataLoader loader_;
};

inline std::vector<uint64_t> Slice(const std::vector<uint64_t>& all,
                                   size_t from, size_t to) {
  return {all.begin() + from, all.begin() + to};
}

// Thread counts and stage parallelism to compare.
struct Shape {
  uint32_t threads;
  uint32_t parallelism;
};
constexpr Shape kShapes[] = {{1, 1}, {2, 2}, {4, 3}, {8, 4}};

inline void SetParallelism(DataLoaderConfig& config, const Shape& shape) {
  config.set_worker_threads(shape.threads);
  for (StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_chunk_unpacker()) {
      stage.mutable_chunk_unpacker()->set_parallelism(shape.parallelism);
    }
    if (stage.has_tensor_generator()) {
      stage.mutable_tensor_generator()->set_parallelism(shape.parallelism);
    }
    if (stage.has_shuffling_chunk_pool()) {
      stage.mutable_shuffling_chunk_pool()->set_reader_parallelism(
          4 * shape.parallelism);
    }
    if (stage.has_audio_decoder()) {
      stage.mutable_audio_decoder()->set_parallelism(shape.parallelism);
    }
    if (stage.has_spectrogram()) {
      stage.mutable_spectrogram()->set_parallelism(shape.parallelism);
    }
  }
}

}  // namespace sluice

#endif  // SLUICE_TESTS_RELIABILITY_BATCH_HASHES_H_
