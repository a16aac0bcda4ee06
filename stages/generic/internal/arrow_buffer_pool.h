// ArrowBufferPool: the buffers an arrow_source reads record batches and
// row blocks into, recycled. While the source lives, a batch's buffer comes
// back when its last view is gone and serves a later read, up to `keep`
// buffers. Each buffer comes back to its home, the CPU that read into it
// (ArrowBufferPool::CurrentHome() at the read), and a read takes a buffer
// of its own CPU first: the buffer's lines may still sit in that core's
// cache, while a core writing a buffer another core wrote last must first
// take every line from that core's cache (on 2 threads, a pool without
// homes moved 0.45-0.53 of the bytes of a 2-thread pread loop, with homes
// 0.49-0.72). When the pool is gone (the source and every batch it made),
// its buffers join a process-wide cache of idle buffers, up to
// kIdleBufferBytes in all, where the next pool of the process (a loader
// per evaluation pass, a benchmark's next run) takes them before
// allocating: a fresh buffer pays a page fault per 4 KiB on first touch
// (1.4 µs each on a 2-core VM: 0.36 ms per MiB, a tenth of the read's own
// rate).
//
//   auto pool = std::make_shared<ArrowBufferPool>(/*keep=*/14);
//   const unsigned home = ArrowBufferPool::CurrentHome();
//   std::vector<std::byte> buffer = pool->Take(home);  // maybe empty
//   ...                                                // read into it
//   pool->Give(std::move(buffer), home);               // from any thread
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_BUFFER_POOL_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_BUFFER_POOL_H_

#include <array>
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

  // The buffer returned last to `home`, else one returned to another home,
  // else an idle one of an earlier pool, else an empty one; of any size
  // and contents (the reader grows it as it needs). Thread-safe.
  std::vector<std::byte> Take(unsigned home);
  // Keeps `buffer` for a later Take at `home` (the CPU that last wrote it)
  // unless `keep` are kept. Thread-safe.
  void Give(std::vector<std::byte> buffer, unsigned home);

  // The CPU the calling thread runs on now (0 where unknown).
  static unsigned CurrentHome();
  // Bytes (by capacity) in the process-wide idle cache now; for tests.
  static size_t IdleBytes();

 private:
  // Homes kept apart; CPUs beyond share them (modulo).
  static constexpr unsigned kHomes = 16;

  const size_t keep_;
  std::mutex mu_;
  size_t kept_ = 0;
  std::array<std::vector<std::vector<std::byte>>, kHomes> free_;
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_BUFFER_POOL_H_
