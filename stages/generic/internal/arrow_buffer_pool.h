// ArrowBufferPool: the buffers an arrow_source reads record batches and
// row blocks into, recycled. While the source lives, a batch's buffer comes
// back when its last view is gone and serves a later read, up to `keep`
// buffers. When the pool is gone (the source and every batch it made), its
// buffers join a process-wide cache of idle buffers, up to
// kIdleBufferBytes in all, where the next pool of the process (a loader per
// evaluation pass, a benchmark's next run) takes them before allocating:
// a fresh buffer pays a page fault per 4 KiB on first touch (1.4 µs each on
// a 2-core VM: 0.36 ms per MiB, a tenth of the read's own rate).
//
//   auto pool = std::make_shared<ArrowBufferPool>(/*keep=*/14);
//   std::vector<std::byte> buffer = pool->Take();  // maybe empty: grow it
//   ...
//   pool->Give(std::move(buffer));                 // from any thread
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_BUFFER_POOL_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_BUFFER_POOL_H_

#include <cstddef>
#include <mutex>
#include <vector>

namespace sluice {

// Idle buffers a process keeps for later pools, at most (by capacity).
inline constexpr size_t kIdleBufferBytes = size_t{64} << 20;

class ArrowBufferPool {
 public:
  // Keeps up to `keep` returned buffers for reuse.
  explicit ArrowBufferPool(size_t keep) : keep_(keep) {}
  // Hands the kept buffers to the process-wide idle cache.
  ~ArrowBufferPool();
  ArrowBufferPool(const ArrowBufferPool&) = delete;
  ArrowBufferPool& operator=(const ArrowBufferPool&) = delete;

  // A returned buffer, else an idle one of an earlier pool, else an empty
  // one; of any size and contents (the reader grows it as it needs).
  // Thread-safe.
  std::vector<std::byte> Take();
  // Keeps `buffer` for a later Take unless `keep` are kept. Thread-safe.
  void Give(std::vector<std::byte> buffer);

  // Bytes (by capacity) in the process-wide idle cache now; for tests.
  static size_t IdleBytes();

 private:
  const size_t keep_;
  std::mutex mu_;
  std::vector<std::vector<std::byte>> free_;
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_BUFFER_POOL_H_
