#include "engine/typed_batch.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

const std::vector<BatchTensorSpec> kSpecs = {{"x", DType::kFloat32, {3, 5}},
                                             {"label", DType::kInt64, {}},
                                             {"mask", DType::kBool, {7}},
                                             {"half", DType::kFloat16, {2}}};

TEST(TypedBatchTest, AllocatesAlignedTensorsOfEveryShape) {
  absl::StatusOr<TypedBatch> batch = TypedBatch::Allocate(kSpecs, 10);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->size(), 10u);
  ASSERT_EQ(batch->tensors().size(), 4u);
  const BatchTensor& x = batch->tensor(0);
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.shape, (std::vector<int64_t>{10, 3, 5}));
  EXPECT_EQ(x.bytes, 10u * 15 * 4);
  EXPECT_EQ(batch->Find("label")->shape, (std::vector<int64_t>{10}));
  EXPECT_EQ(batch->Find("label")->bytes, 80u);
  EXPECT_EQ(batch->Find("mask")->bytes, 70u);
  EXPECT_EQ(batch->Find("half")->bytes, 40u);
  EXPECT_EQ(batch->Find("nope"), nullptr);
  // Every tensor starts on a cache line; they do not overlap.
  const auto* begin = static_cast<const std::byte*>(x.data);
  size_t end = 0;
  for (const BatchTensor& tensor : batch->tensors()) {
    const auto offset =
        static_cast<size_t>(static_cast<const std::byte*>(tensor.data) - begin);
    EXPECT_EQ(offset % kBatchBufferAlignment, 0u) << tensor.name;
    EXPECT_GE(offset, end) << tensor.name;
    end = offset + tensor.bytes;
    std::memset(tensor.data, 1, tensor.bytes);  // ASan: within the buffer
  }
  EXPECT_LE(end, TypedBatch::AllocationBytes(kSpecs, 10));
}

TEST(TypedBatchTest, BuffersComeFromThePoolAndGoBack) {
  auto pool =
      BatchBufferPool::Create(TypedBatch::AllocationBytes(kSpecs, 4), 2);
  const void* first = nullptr;
  {
    absl::StatusOr<TypedBatch> batch = TypedBatch::Allocate(kSpecs, 4, pool);
    ASSERT_TRUE(batch.ok());
    first = batch->tensor(0).data;
    TypedBatch copy = *batch;  // copies share the owner
    EXPECT_EQ(copy.tensor(0).data, first);
  }
  EXPECT_EQ(pool->free_buffers(), 1u);
  absl::StatusOr<TypedBatch> again = TypedBatch::Allocate(kSpecs, 4, pool);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->tensor(0).data, first);
  EXPECT_EQ(TypedBatch::Allocate(kSpecs, 5, pool).status().code(),
            absl::StatusCode::kInvalidArgument);  // a pool of another size
}

TEST(TypedBatchTest, RefusesBadLayouts) {
  EXPECT_EQ(TypedBatch::Allocate(kSpecs, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TypedBatch::Allocate({}, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<BatchTensorSpec> twice = {{"a", DType::kInt8, {}},
                                              {"a", DType::kInt8, {}}};
  EXPECT_EQ(TypedBatch::Allocate(twice, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<BatchTensorSpec> negative = {{"a", DType::kInt8, {-1}}};
  EXPECT_EQ(TypedBatch::Allocate(negative, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<BatchTensorSpec> huge = {
      {"a", DType::kFloat64, {int64_t{1} << 40}}};
  EXPECT_EQ(TypedBatch::Allocate(huge, 1 << 24).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(TypedBatchTest, TruncateKeepsTheFirstExamplesInPlace) {
  absl::StatusOr<TypedBatch> batch = TypedBatch::Allocate(kSpecs, 8);
  ASSERT_TRUE(batch.ok());
  batch->set_example_ids({0, 1, 2, 3, 4, 5, 6, 7});
  const void* data = batch->tensor(0).data;
  batch->Truncate(3);
  EXPECT_EQ(batch->size(), 3u);
  EXPECT_EQ(batch->tensor(0).shape, (std::vector<int64_t>{3, 3, 5}));
  EXPECT_EQ(batch->tensor(0).bytes, 3u * 15 * 4);
  EXPECT_EQ(batch->tensor(0).data, data);
  EXPECT_EQ(batch->example_ids(), (std::vector<uint64_t>{0, 1, 2}));
}

TEST(TypedBatchTest, WrapsMemoryOfAnotherLayout) {
  auto values = std::make_shared<std::vector<int32_t>>(
      std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  TypedBatch batch(3, {{"pairs", DType::kInt32, {3, 2}, values->data(), 24}},
                   values);
  values.reset();  // the batch keeps the memory alive
  EXPECT_EQ(batch.Find("pairs")->As<int32_t>()[5], 6);
  EXPECT_EQ(batch.owner().use_count(), 1);
}

TEST(DTypeTest, NamesSizesAndCppTypes) {
  EXPECT_EQ(DTypeName(DType::kFloat16), "float16");
  EXPECT_EQ(DTypeFromName("uint8"), DType::kUInt8);
  EXPECT_EQ(DTypeFromName("uint16"), std::nullopt);
  EXPECT_EQ(DTypeSize(DType::kInt64), 8u);
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_EQ(DTypeOf<double>(), DType::kFloat64);
  EXPECT_EQ(DTypeOf<bool>(), DType::kBool);
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                      DType::kInt64, DType::kInt32, DType::kInt16, DType::kInt8,
                      DType::kUInt8, DType::kBool}) {
    EXPECT_EQ(DTypeFromName(DTypeName(dtype)), dtype);
  }
}

}  // namespace
}  // namespace sluice
