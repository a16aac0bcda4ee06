#include "stages/lc0/format/batch_buffer_pool.h"

#include <cstdint>

#include "gtest/gtest.h"
#include "stages/lc0/format/tensor_batch.h"

namespace sluice::lc0 {
namespace {

TEST(BatchBufferPoolTest, DroppedBatchesGiveTheirBufferBack) {
  auto pool = BatchBufferPool::Create(TensorBatch::AllocationBytes(8), 2);
  const float* first_data;
  {
    absl::StatusOr<TensorBatch> batch = TensorBatch::Create(8, pool);
    ASSERT_TRUE(batch.ok());
    first_data = batch->planes(0);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first_data) % kTensorAlignment, 0u);
  }
  EXPECT_EQ(pool->free_buffers(), 1u);
  absl::StatusOr<TensorBatch> again = TensorBatch::Create(8, pool);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->planes(0), first_data);
  EXPECT_EQ(pool->free_buffers(), 0u);
}

TEST(BatchBufferPoolTest, ReleasedOwnershipAlsoReturnsTheBuffer) {
  auto pool = BatchBufferPool::Create(TensorBatch::AllocationBytes(4), 1);
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(4, pool);
  ASSERT_TRUE(batch.ok());
  std::shared_ptr<void> owner = std::move(*batch).ReleaseOwnership();
  EXPECT_EQ(pool->free_buffers(), 0u);
  owner.reset();
  EXPECT_EQ(pool->free_buffers(), 1u);
}

TEST(BatchBufferPoolTest, KeepsAtMostMaxFreeBuffers) {
  auto pool = BatchBufferPool::Create(TensorBatch::AllocationBytes(2), 1);
  {
    absl::StatusOr<TensorBatch> a = TensorBatch::Create(2, pool);
    absl::StatusOr<TensorBatch> b = TensorBatch::Create(2, pool);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(pool->allocated_buffers(), 2u);
  }
  EXPECT_EQ(pool->free_buffers(), 1u);
  EXPECT_EQ(pool->allocated_buffers(), 1u);  // the other one was freed
}

TEST(BatchBufferPoolTest, RejectsAPoolOfTheWrongSize) {
  auto pool = BatchBufferPool::Create(TensorBatch::AllocationBytes(2), 1);
  EXPECT_EQ(TensorBatch::Create(3, pool).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BatchBufferPoolTest, BuffersOutliveThePoolOwner) {
  auto pool = BatchBufferPool::Create(TensorBatch::AllocationBytes(2), 1);
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(2, pool);
  ASSERT_TRUE(batch.ok());
  pool.reset();  // the batch keeps the pool alive until it is dropped
  batch->planes(1)[0] = 1.0f;
  EXPECT_EQ(batch->planes(1)[0], 1.0f);
}

}  // namespace
}  // namespace sluice::lc0
