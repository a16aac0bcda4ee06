#include "stages/lc0/format/record_blocks.h"

#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sluice::lc0 {
namespace {

TEST(RecordBlocksTest, BlocksHoldTheirBytesAndComeBackOnTheSameThread) {
  std::byte* block = record_blocks::Allocate(1100);
  std::memset(block, 0xAB, 1100);  // all 1,100 bytes are usable
  record_blocks::Free(block, 1100);
  // Another size of the same 64-byte class reuses the freed block.
  std::byte* again = record_blocks::Allocate(1090);
  EXPECT_EQ(again, block);
  record_blocks::Free(again, 1090);
}

TEST(RecordBlocksTest, LargeAndEmptyBlocksAreServed) {
  const size_t large = record_blocks::kMaxPooledBytes + 1;
  std::byte* big = record_blocks::Allocate(large);
  std::memset(big, 1, large);
  record_blocks::Free(big, large);
  std::byte* empty = record_blocks::Allocate(0);
  EXPECT_NE(empty, nullptr);
  record_blocks::Free(empty, 0);
  record_blocks::Free(nullptr, 100);  // a no-op
}

TEST(RecordBlocksTest, BlocksFreedOnAnotherThreadReachTheAllocatingOne) {
  constexpr size_t kBytes = 1500;
  constexpr size_t kBlocks = 10 * record_blocks::kBatchBlocks;
  std::vector<std::byte*> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(record_blocks::Allocate(kBytes));
  }
  const size_t shared_before = record_blocks::SharedFreeBlocks();
  // The freeing thread keeps a bounded cache and gives the rest, and its
  // cache when it exits, to the shared list.
  std::thread([&] {
    for (std::byte* block : blocks) record_blocks::Free(block, kBytes);
  }).join();
  EXPECT_EQ(record_blocks::SharedFreeBlocks(), shared_before + kBlocks);

  const std::set<std::byte*> freed(blocks.begin(), blocks.end());
  std::vector<std::byte*> reused;
  for (size_t i = 0; i < kBlocks; ++i) {
    reused.push_back(record_blocks::Allocate(kBytes));
  }
  size_t recycled = 0;
  for (std::byte* block : reused) recycled += freed.count(block);
  EXPECT_EQ(recycled, kBlocks);
  for (std::byte* block : reused) record_blocks::Free(block, kBytes);
}

TEST(RecordBlocksTest, TheSharedListIsBounded) {
  constexpr size_t kBytes = 2048;
  constexpr size_t kBound = record_blocks::kMaxSharedBytes / kBytes;
  std::vector<std::byte*> blocks;
  for (size_t i = 0; i < kBound + 1000; ++i) {
    blocks.push_back(record_blocks::Allocate(kBytes));
  }
  std::thread([&] {
    for (std::byte* block : blocks) record_blocks::Free(block, kBytes);
  }).join();
  EXPECT_LE(record_blocks::SharedFreeBlocks() * 64,
            record_blocks::kMaxSharedBytes);
  // Every pooled block is at least 64 bytes, so the bound on bytes bounds
  // the count; the 2,048-byte class alone fills it.
  EXPECT_GE(record_blocks::SharedFreeBlocks(), kBound - kBound / 10);
}

}  // namespace
}  // namespace sluice::lc0
