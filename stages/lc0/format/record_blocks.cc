#include "stages/lc0/format/record_blocks.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <new>
#include <vector>

namespace sluice::lc0::record_blocks {
namespace {

constexpr size_t kClasses = kMaxPooledBytes / kClassBytes;

// Class c holds blocks of (c + 1) * kClassBytes bytes.
size_t ClassOf(size_t bytes) {
  return (std::max<size_t>(bytes, 1) + kClassBytes - 1) / kClassBytes - 1;
}
size_t ClassBytes(size_t size_class) { return (size_class + 1) * kClassBytes; }

using FreeBlocks = std::array<std::vector<std::byte*>, kClasses>;

// The blocks every thread can take from.
struct SharedList {
  std::mutex mu;
  FreeBlocks free;   // guarded by mu
  size_t bytes = 0;  // guarded by mu
};

SharedList& Shared() {
  // Never destroyed: threads give their blocks back as they exit, which
  // may be after static destruction has begun.
  static auto* const shared = new SharedList;
  return *shared;
}

// Moves the last `count` blocks of `blocks` to the shared list, freeing
// those beyond its byte bound.
void GiveToShared(size_t size_class, std::vector<std::byte*>& blocks,
                  size_t count) {
  const size_t block_bytes = ClassBytes(size_class);
  const auto first = blocks.end() - static_cast<ptrdiff_t>(count);
  auto kept = first;
  {
    SharedList& shared = Shared();
    std::lock_guard lock(shared.mu);
    const size_t room = (kMaxSharedBytes - shared.bytes) / block_bytes;
    kept = first + static_cast<ptrdiff_t>(std::min(count, room));
    shared.free[size_class].insert(shared.free[size_class].end(), first, kept);
    shared.bytes += static_cast<size_t>(kept - first) * block_bytes;
  }
  for (auto it = kept; it != blocks.end(); ++it) {
    ::operator delete(*it);
  }
  blocks.erase(first, blocks.end());
}

// Appends up to kBatchBlocks blocks of the shared list to `blocks`.
void TakeFromShared(size_t size_class, std::vector<std::byte*>& blocks) {
  SharedList& shared = Shared();
  std::lock_guard lock(shared.mu);
  std::vector<std::byte*>& source = shared.free[size_class];
  const size_t count = std::min(source.size(), kBatchBlocks);
  const auto first = source.end() - static_cast<ptrdiff_t>(count);
  blocks.insert(blocks.end(), first, source.end());
  source.erase(first, source.end());
  shared.bytes -= count * ClassBytes(size_class);
}

thread_local bool thread_cache_gone = false;

// One thread's unused blocks; given back to the shared list when the
// thread exits.
struct ThreadCache {
  ~ThreadCache() {
    for (size_t c = 0; c < kClasses; ++c)
      GiveToShared(c, free[c], free[c].size());
    thread_cache_gone = true;
  }
  FreeBlocks free;
};

// This thread's cache; nullptr while the thread is exiting after its cache
// was destroyed.
ThreadCache* MyCache() {
  if (thread_cache_gone) return nullptr;
  thread_local ThreadCache cache;
  return &cache;
}

}  // namespace

std::byte* Allocate(size_t bytes) {
  if (bytes > kMaxPooledBytes) {
    return static_cast<std::byte*>(::operator new(bytes));
  }
  const size_t size_class = ClassOf(bytes);
  if (ThreadCache* cache = MyCache()) {
    std::vector<std::byte*>& blocks = cache->free[size_class];
    if (blocks.empty()) TakeFromShared(size_class, blocks);
    if (!blocks.empty()) {
      std::byte* block = blocks.back();
      blocks.pop_back();
      return block;
    }
  }
  return static_cast<std::byte*>(::operator new(ClassBytes(size_class)));
}

void Free(std::byte* block, size_t bytes) {
  if (block == nullptr) return;
  if (bytes > kMaxPooledBytes) {
    ::operator delete(block);
    return;
  }
  const size_t size_class = ClassOf(bytes);
  ThreadCache* cache = MyCache();
  if (cache == nullptr) {
    ::operator delete(block);
    return;
  }
  std::vector<std::byte*>& blocks = cache->free[size_class];
  blocks.push_back(block);
  if (blocks.size() > kMaxCachedPerClass) {
    GiveToShared(size_class, blocks, kBatchBlocks);
  }
}

size_t SharedFreeBlocks() {
  SharedList& shared = Shared();
  std::lock_guard lock(shared.mu);
  size_t blocks = 0;
  for (const auto& list : shared.free) blocks += list.size();
  return blocks;
}

}  // namespace sluice::lc0::record_blocks
