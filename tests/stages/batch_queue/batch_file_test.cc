// Batch files of any workload's tensors: typed batches written, read back
// bit for bit, refused when their schemas differ; the queue stages carry
// them with their dtypes.
#include "stages/batch_queue/internal/batch_file.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/batch_queue_layout.h"
#include "tests/stages/batch_queue/batch_queue_test_util.h"

namespace sluice::batch_queue {
namespace {

using ::sluice::lc0::testing::TempDir;
using ::sluice::lc0::testing::WaitUntil;
using ::testing::HasSubstr;
using testing::MakeBatch;
using testing::ReaderStage;
using testing::StartLoader;

const std::vector<BatchTensorSpec> kSpecs = {
    {"label", DType::kInt64, {}},  {"pixels", DType::kUInt8, {2, 3}},
    {"mask", DType::kBool, {4}},   {"half", DType::kFloat16, {2}},
    {"wide", DType::kFloat64, {}}, {"small", DType::kInt8, {3}},
    {"short", DType::kInt16, {}},  {"word", DType::kInt32, {2}},
    {"x", DType::kFloat32, {5}}};

// A batch of kSpecs whose bytes are `seed`, `seed` + 1, ... (bools 0/1).
TypedBatch TypedBatchOf(int seed, size_t size = 3) {
  TypedBatch batch = *TypedBatch::Allocate(kSpecs, size);
  for (const BatchTensor& tensor : batch.tensors()) {
    auto* bytes = static_cast<unsigned char*>(tensor.data);
    for (size_t i = 0; i < tensor.bytes; ++i) {
      bytes[i] = tensor.dtype == DType::kBool ? (seed + i) % 2 : seed + i;
    }
  }
  return batch;
}

std::string Bytes(const BatchTensor& tensor) {
  return std::string(static_cast<const char*>(tensor.data), tensor.bytes);
}

TEST(BatchFileTest, TypedBatchesRoundTripBitForBit) {
  TempDir dir;
  const std::vector<TypedBatch> batches = {TypedBatchOf(1), TypedBatchOf(50)};
  uint64_t bytes = 0;
  absl::StatusOr<std::string> name =
      WriteBatchFile(dir.path(), "train", 1, 1000, batches, &bytes);
  ASSERT_TRUE(name.ok()) << name.status();
  const std::vector<FieldSpec> schema = BatchSchemaOf(batches[0]);
  EXPECT_EQ(schema[0].dtype, "I64");
  EXPECT_EQ(schema[1].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(schema[2].dtype, "BOOL");
  EXPECT_EQ(schema[3].dtype, "F16");
  EXPECT_EQ(schema[0].role, "input");
  EXPECT_EQ(schema[1].role, "target");
  absl::StatusOr<BatchFile> file = BatchFile::Open(dir / *name, schema);
  ASSERT_TRUE(file.ok()) << file.status();
  for (int b = 0; b < 2; ++b) {
    absl::StatusOr<TypedBatch> read = file->ReadBatch(b);
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(read->tensors().size(), kSpecs.size());
    for (size_t t = 0; t < kSpecs.size(); ++t) {
      EXPECT_EQ(read->tensor(t).name, kSpecs[t].name);
      EXPECT_EQ(read->tensor(t).dtype, kSpecs[t].dtype);
      EXPECT_EQ(read->tensor(t).shape, batches[b].tensor(t).shape);
      EXPECT_EQ(Bytes(read->tensor(t)), Bytes(batches[b].tensor(t)))
          << kSpecs[t].name;
    }
  }
  // Opened against another schema: refused, naming the field.
  std::vector<FieldSpec> other = schema;
  other[4].dtype = "F32";
  absl::StatusOr<BatchFile> refused = BatchFile::Open(dir / *name, other);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("wide"));
}

TEST(BatchFileTest, BatchesOfOneFileMustShareTheirSchema) {
  TempDir dir;
  const std::vector<TypedBatch> mixed = {TypedBatchOf(1), MakeBatch(2, 3)};
  uint64_t bytes = 0;
  EXPECT_EQ(WriteBatchFile(dir.path(), "train", 1, 1000, mixed, &bytes)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BatchFileTest, DtypesSluiceDoesNotCarryAreNamed) {
  absl::StatusOr<std::vector<BatchTensorSpec>> specs =
      TensorSpecsOf({{.name = "ids", .dtype = "U16", .shape = {}}});
  EXPECT_EQ(specs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(specs.status().message()), HasSubstr("'ids'"));
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                      DType::kInt64, DType::kInt32, DType::kInt16, DType::kInt8,
                      DType::kUInt8, DType::kBool}) {
    EXPECT_EQ(DTypeOfSafetensors(SafetensorsDtypeOf(dtype)), dtype);
  }
}

// The queue stages move typed tensors: a reader feeding a writer copies a
// queue of kSpecs batches, meta.json gets their schema and the configured
// training type.
TEST(BatchFileTest, TheQueueStagesCarryTypedTensors) {
  TempDir a, b;
  ASSERT_TRUE(MakeDirs(a.path()).ok());
  ASSERT_TRUE(WriteDatasetMeta(a.path(),
                               {.dataset_name = "typed",
                                .training_type = "CLASSIFICATION",
                                .batch_size = 3,
                                .batch_schema = BatchSchemaOf(TypedBatchOf(0))})
                  .ok());
  const std::string dir = QueueDir(a.path(), "train");
  ASSERT_TRUE(MakeDirs(dir).ok());
  uint64_t bytes = 0;
  const std::vector<TypedBatch> batches = {TypedBatchOf(7), TypedBatchOf(9)};
  ASSERT_TRUE(WriteBatchFile(dir, "train", 1, 1000, batches, &bytes).ok());
  auto loader = StartLoader(absl::StrCat(
      ReaderStage(a.path()),
      "stage { name: 'writer' input: 'reader' batch_file_writer { root: '",
      b.path(),
      "' split: 'train' dataset_name: 'typed' batch_size: 3 "
      "training_type: 'CLASSIFICATION' batches_per_file: 2 } }"));
  const std::string out = QueueDir(b.path(), "train");
  ASSERT_TRUE(WaitUntil([&] {
    absl::StatusOr<std::vector<QueueFile>> files = ListQueueFiles(out);
    return files.ok() && files->size() == 1;
  }));
  loader->Stop();
  absl::StatusOr<DatasetMeta> meta = ReadDatasetMeta(b.path());
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->training_type, "CLASSIFICATION");
  EXPECT_EQ(meta->batch_schema, BatchSchemaOf(batches[0]));
  absl::StatusOr<std::vector<QueueFile>> files = ListQueueFiles(out);
  absl::StatusOr<BatchFile> file =
      BatchFile::Open(out + "/" + files->front().name, meta->batch_schema);
  ASSERT_TRUE(file.ok()) << file.status();
  for (int i = 0; i < 2; ++i) {
    TypedBatch copy = *file->ReadBatch(i);
    for (size_t t = 0; t < kSpecs.size(); ++t) {
      EXPECT_EQ(Bytes(copy.tensor(t)), Bytes(batches[i].tensor(t)));
    }
  }
}

}  // namespace
}  // namespace sluice::batch_queue
