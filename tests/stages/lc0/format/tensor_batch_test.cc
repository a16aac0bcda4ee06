#include "stages/lc0/format/tensor_batch.h"

#include <cstdint>
#include <utility>

#include "engine/batch_buffer_pool.h"
#include "gtest/gtest.h"

namespace sluice::lc0 {
namespace {

constexpr TensorId kAll[] = {TensorId::kPlanes, TensorId::kProbs,
                             TensorId::kWinner, TensorId::kBestQ,
                             TensorId::kPliesLeft};

bool Aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kTensorAlignment == 0;
}

TEST(TensorBatchTest, RejectsAnEmptyBatch) {
  EXPECT_EQ(TensorBatch::Create(0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorBatchTest, ShapesNamesAndSizes) {
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(5);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->size(), 5u);
  const TensorView planes = batch->view(TensorId::kPlanes);
  EXPECT_EQ(planes.name, "planes");
  EXPECT_EQ(planes.rank, 4);
  EXPECT_EQ(planes.shape, (std::array<int64_t, 4>{5, 112, 8, 8}));
  EXPECT_EQ(planes.bytes, 5u * 112 * 64 * 4);
  const TensorView probs = batch->view(TensorId::kProbs);
  EXPECT_EQ(probs.name, "probs");
  EXPECT_EQ(probs.rank, 2);
  EXPECT_EQ(probs.shape[1], 1858);
  EXPECT_EQ(probs.bytes, 5u * 1858 * 4);
  EXPECT_EQ(batch->view(TensorId::kWinner).name, "winner");
  EXPECT_EQ(batch->view(TensorId::kBestQ).name, "best_q");
  EXPECT_EQ(batch->view(TensorId::kBestQ).shape[1], 3);
  const TensorView plies = batch->view(TensorId::kPliesLeft);
  EXPECT_EQ(plies.name, "plies_left");
  EXPECT_EQ(plies.rank, 1);
  EXPECT_EQ(plies.bytes, 5u * 4);
}

TEST(TensorBatchTest, OneAllocationEveryTensorAlignedAndDisjoint) {
  // An odd batch size makes every unpadded tensor end off-alignment.
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(3);
  ASSERT_TRUE(batch.ok());
  const auto* base =
      reinterpret_cast<const char*>(batch->view(TensorId::kPlanes).data);
  const char* end = base + batch->allocation_bytes();
  const char* previous_end = base;
  for (TensorId id : kAll) {
    const TensorView v = batch->view(id);
    SCOPED_TRACE(std::string(v.name));
    EXPECT_TRUE(Aligned(v.data));
    const auto* begin = reinterpret_cast<const char*>(v.data);
    EXPECT_GE(begin, previous_end);
    EXPECT_LE(begin + v.bytes, end);
    previous_end = begin + v.bytes;
  }
}

TEST(TensorBatchTest, SlotPointersIndexIntoTheViews) {
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(4);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->planes(2), batch->view(TensorId::kPlanes).data + 2 * 7168);
  EXPECT_EQ(batch->probs(3), batch->view(TensorId::kProbs).data + 3 * 1858);
  EXPECT_EQ(batch->winner(1), batch->view(TensorId::kWinner).data + 3);
  EXPECT_EQ(batch->best_q(2), batch->view(TensorId::kBestQ).data + 6);
  EXPECT_EQ(batch->plies_left(3), batch->view(TensorId::kPliesLeft).data + 3);
}

TEST(TensorBatchTest, StoresGameIds) {
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(3);
  ASSERT_TRUE(batch.ok());
  batch->set_game_id(0, 7);
  batch->set_game_id(1, 7);
  batch->set_game_id(2, 99);
  EXPECT_EQ(batch->game_id(2), 99u);
  ASSERT_EQ(batch->game_ids().size(), 3u);
  EXPECT_EQ(batch->game_ids()[1], 7u);
}

TEST(TensorBatchTest, MoveTransfersTheAllocation) {
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(2);
  ASSERT_TRUE(batch.ok());
  float* planes = batch->view(TensorId::kPlanes).data;
  TensorBatch moved = *std::move(batch);
  EXPECT_EQ(moved.view(TensorId::kPlanes).data, planes);
  EXPECT_EQ(moved.size(), 2u);
  TensorBatch assigned = std::move(moved);
  EXPECT_EQ(assigned.view(TensorId::kPlanes).data, planes);
  EXPECT_EQ(moved.size(), 0u);  // NOLINT(bugprone-use-after-move)
}

TEST(TensorBatchTest, ReleaseOwnershipHandsOverWithoutCopy) {
  std::shared_ptr<void> owner;
  TensorView probs;
  {
    absl::StatusOr<TensorBatch> batch = TensorBatch::Create(2);
    ASSERT_TRUE(batch.ok());
    probs = batch->view(TensorId::kProbs);
    const float* planes = batch->view(TensorId::kPlanes).data;
    for (int i = 0; i < 2 * 1858; ++i) probs.data[i] = static_cast<float>(i);
    owner = std::move(*batch).ReleaseOwnership();
    // The owner holds the very allocation the views point into.
    EXPECT_EQ(owner.get(), planes);
    EXPECT_EQ(batch->size(), 0u);
    EXPECT_EQ(batch->view(TensorId::kProbs).data, nullptr);
  }  // The batch is gone; the owner keeps the memory alive.
  ASSERT_EQ(owner.use_count(), 1);
  for (int i = 0; i < 2 * 1858; ++i) {
    ASSERT_EQ(probs.data[i], static_cast<float>(i));
  }
}

// Batches made from a BatchBufferPool.
TEST(TensorBatchPoolTest, DroppedBatchesGiveTheirBufferBack) {
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

TEST(TensorBatchPoolTest, ReleasedOwnershipAlsoReturnsTheBuffer) {
  auto pool = BatchBufferPool::Create(TensorBatch::AllocationBytes(4), 1);
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(4, pool);
  ASSERT_TRUE(batch.ok());
  std::shared_ptr<void> owner = std::move(*batch).ReleaseOwnership();
  EXPECT_EQ(pool->free_buffers(), 0u);
  owner.reset();
  EXPECT_EQ(pool->free_buffers(), 1u);
}

TEST(TensorBatchPoolTest, KeepsAtMostMaxFreeBuffers) {
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

TEST(TensorBatchPoolTest, RejectsAPoolOfTheWrongSize) {
  auto pool = BatchBufferPool::Create(TensorBatch::AllocationBytes(2), 1);
  EXPECT_EQ(TensorBatch::Create(3, pool).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorBatchPoolTest, BuffersOutliveThePoolOwner) {
  auto pool = BatchBufferPool::Create(TensorBatch::AllocationBytes(2), 1);
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(2, pool);
  ASSERT_TRUE(batch.ok());
  pool.reset();  // the batch keeps the pool alive until it is dropped
  batch->planes(1)[0] = 1.0f;
  EXPECT_EQ(batch->planes(1)[0], 1.0f);
}

}  // namespace
}  // namespace sluice::lc0
