// AsyncFileReader: positional file reads for coroutines, through io_uring
// when the kernel allows it, else through a small pool of blocking pread
// threads (containers and hardened kernels often forbid io_uring).
//
//   AsyncFileReader reader(io_context, {});
//   absl::StatusOr<size_t> got = co_await reader.ReadAt(fd, offset, buffer);
//   std::vector<absl::StatusOr<size_t>> each =
//       co_await reader.ReadBatchAt(requests);  // one resumption for all
//
// Promises:
// - A read of bytes the page cache already holds is copied at once on the
//   calling thread (preadv2 with RWF_NOWAIT) and the caller goes on
//   without suspending; only the rest of a read goes to the backend. A
//   read served so pays no completion round trip (eventfd, epoll, a
//   wake-up of another thread); a read from disk costs one extra syscall.
// - A read the backend serves while it is submitted (io_uring: the page
//   cache holds it and the ring was idle) also returns without suspending
//   (io/internal/io_uring_backend.h tells each completion path).
// - Many reads may be in flight at once, from any executor thread; io_uring
//   submissions are batched and at most `queue_depth` are in each ring, the
//   rest wait their turn in submission order. With several rings, reads
//   that hit the page cache are copied on several threads at once.
// - ReadAt completes once, on the executor of the awaiting coroutine, with
//   the bytes read (0 at end of file; fewer than asked only at end of file
//   or on a short read) or an error status carrying errno's text.
// - ReadBatchAt hands all its reads to the backend at once (one lock, one
//   submission) and completes once, when the last of them is done, with
//   what ReadAt would have returned for each.
// - Cancellation: a read suspended in ReadAt or ReadBatchAt whose
//   coroutine's cancellation slot emits is cancelled (io_uring: an async
//   cancel; threads: if not started yet) and returns a Cancelled status,
//   or its bytes if it finished first. It returns only once the kernel is
//   done with the buffer.
// - O_DIRECT: a request with `direct_alignment` set (the fd was opened with
//   O_DIRECT, see io/direct_file.h) whose offset, length or buffer is not a
//   multiple of it is read through an aligned bounce buffer and copied out
//   (counted as `bounced_reads`); aligned ones go straight to the buffer.
//   Such reads never try the page cache first.
// - Registered buffers and files (io_uring fixed buffers and files):
//   RegisterBuffer / RegisterFile give slots that requests name; the ring
//   then skips per-read work on that memory or file (IORING_OP_READ_FIXED,
//   IOSQE_FIXED_FILE). Where the backend cannot, registration fails and
//   requests keep their slots at -1.
// - The backend is chosen once, at construction: when io_uring cannot be set
//   up the fallback is used; backend_name() tells which and
//   fallback_reason() why (the owner logs it).
// - Destruction cancels the reads in flight and waits until the kernel (or
//   the pread threads) let go of their buffers; their coroutines resume
//   with a Cancelled status if the io_context still runs. The io_context
//   must outlive the reader.
// - Tests can make reads fail: SetFaultInjectorForTesting installs a
//   process-wide hook asked before each read; unset, it costs one relaxed
//   atomic load per read.
// - A ReadObserver (SetObserver; a pipeline's trace) is told of every
//   ReadBatchAt; unset, it costs one relaxed atomic load per call.
#ifndef SLUICE_IO_ASYNC_FILE_READER_H_
#define SLUICE_IO_ASYNC_FILE_READER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "asio/awaitable.hpp"
#include "asio/io_context.hpp"

namespace sluice::io {

namespace internal {
class BouncePool;
class ReadBackend;
}  // namespace internal

class AsyncFileReader {
 public:
  struct Options {
    // Try io_uring first; false forces the fallback. The environment
    // variable SLUICE_DISABLE_IO_URING=1 also forces it.
    bool use_io_uring = true;
    // Reads in each ring at once.
    unsigned queue_depth = 128;
    // Threads of the fallback path.
    unsigned fallback_threads = 2;
    // io_uring rings; 0 means one per core, at most 4.
    unsigned rings = 0;
    // Copy what the page cache holds at once, on the calling thread; false
    // sends every read to the backend.
    bool cached_reads_inline = true;
  };

  // How the reads so far were served (a read split between the first two
  // counts in both), and the bytes each of those two parts returned.
  struct Counts {
    uint64_t inline_reads = 0;   // copied from the page cache at once
    uint64_t backend_reads = 0;  // handed to io_uring or the threads
    uint64_t inline_bytes = 0;
    uint64_t backend_bytes = 0;
    // Of the backend reads, those done before Submit returned (io_uring
    // served them while submitting; the caller did not suspend).
    uint64_t served_at_submit = 0;
    uint64_t bounced_reads = 0;  // O_DIRECT reads through a bounce buffer
  };

  // One read: up to buffer.size() bytes of `fd` at `offset`.
  struct ReadRequest {
    int fd = -1;
    uint64_t offset = 0;
    std::span<std::byte> buffer;
    // Non-zero when `fd` was opened with O_DIRECT: the alignment its
    // offsets, lengths and buffer addresses need.
    uint32_t direct_alignment = 0;
    // A slot from RegisterBuffer whose region holds `buffer`, or -1.
    int registered_buffer = -1;
    // A slot from RegisterFile holding `fd`, or -1.
    int registered_file = -1;
  };

  // A slot in the reader's table of registered buffers or files; cleared
  // when destroyed (destroy it before the reader, once no read names it).
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept { *this = std::move(other); }
    Registration& operator=(Registration&& other) noexcept;
    ~Registration();
    // The slot to put in ReadRequest; -1 when empty.
    int index() const { return index_; }

   private:
    friend class AsyncFileReader;
    enum class Kind { kBuffer, kFile };
    Registration(AsyncFileReader* reader, Kind kind, int index)
        : reader_(reader), kind_(kind), index_(index) {}
    // Empties the slot (and this).
    void Clear();
    AsyncFileReader* reader_ = nullptr;
    Kind kind_ = Kind::kBuffer;
    int index_ = -1;
  };

  AsyncFileReader(asio::io_context& io_context, Options options);
  ~AsyncFileReader();
  AsyncFileReader(const AsyncFileReader&) = delete;
  AsyncFileReader& operator=(const AsyncFileReader&) = delete;

  // "io_uring" or "pread-threads".
  std::string_view backend_name() const;
  bool uses_io_uring() const;
  // Why io_uring is not in use; empty when it is.
  const std::string& fallback_reason() const { return fallback_reason_; }
  // The ring features in use ("submit_all registered_buffers ..."); empty
  // for the fallback.
  std::string features() const;
  Counts counts() const;

  // Reads up to request.buffer.size() bytes (one read call, or one aligned
  // read through a bounce buffer).
  asio::awaitable<absl::StatusOr<size_t>> ReadAt(ReadRequest request);
  asio::awaitable<absl::StatusOr<size_t>> ReadAt(int fd, uint64_t offset,
                                                 std::span<std::byte> buffer) {
    return ReadAt(ReadRequest{.fd = fd, .offset = offset, .buffer = buffer});
  }

  // Issues one read call per request, all in flight together; resumes the
  // caller once, when every read is done. Result i is for requests[i], as
  // ReadAt would return it. The buffers must outlive the call.
  asio::awaitable<std::vector<absl::StatusOr<size_t>>> ReadBatchAt(
      std::span<const ReadRequest> requests);

  // Reads until the buffer is full or end of file; returns the bytes read.
  asio::awaitable<absl::StatusOr<size_t>> ReadFullyAt(ReadRequest request);
  asio::awaitable<absl::StatusOr<size_t>> ReadFullyAt(
      int fd, uint64_t offset, std::span<std::byte> buffer) {
    return ReadFullyAt(
        ReadRequest{.fd = fd, .offset = offset, .buffer = buffer});
  }

  // Registers `region` with every ring (it must outlive the registration
  // and stay where it is); requests into it may name the slot. Fails where
  // the backend cannot (the pread threads, old kernels, a locked-memory
  // limit too low) or all slots are taken.
  absl::StatusOr<Registration> RegisterBuffer(std::span<std::byte> region);
  // Registers the open file `fd` with every ring; requests reading `fd`
  // may name the slot (the fd must stay open while they do).
  absl::StatusOr<Registration> RegisterFile(int fd);

  // Told of each ReadBatchAt (and so each ReadAt) once its reads are done,
  // on the thread of the awaiting coroutine: when it was called, when it
  // completed, its reads, the bytes they read and how many of them were
  // served whole from the page cache at once. Must be thread-safe and
  // cheap.
  class ReadObserver {
   public:
    virtual ~ReadObserver() = default;
    virtual void OnReads(std::chrono::steady_clock::time_point begin,
                         std::chrono::steady_clock::time_point end,
                         size_t reads, uint64_t bytes,
                         size_t from_page_cache) = 0;
  };
  // Installs `observer` (nullptr removes it). It must outlive the reads
  // issued while it is installed.
  void SetObserver(ReadObserver* observer) {
    observer_.store(observer, std::memory_order_release);
  }

  // Returns an errno to fail the read of `fd` at `offset` with (no I/O is
  // done), or nullopt to read normally. Called on executor threads; must be
  // thread-safe and cheap.
  using FaultInjector = std::optional<int> (*)(int fd, uint64_t offset);
  // Installs `injector` for every reader of the process (nullptr removes
  // it). For tests of error handling only.
  static void SetFaultInjectorForTesting(FaultInjector injector);

 private:
  // Copies what the page cache holds of `request` now; returns the bytes
  // copied, 0 when nothing could be copied without waiting, or nullopt at
  // end of file.
  std::optional<size_t> CopyCached(const ReadRequest& request);
  // A free slot of `kind`'s table, or -1.
  int TakeSlot(Registration::Kind kind);
  void ReleaseSlot(Registration::Kind kind, int index);

  // Aligned buffers for O_DIRECT reads that are not aligned themselves.
  std::shared_ptr<internal::BouncePool> bounces_;
  std::unique_ptr<internal::ReadBackend> backend_;
  std::string fallback_reason_;
  std::atomic<bool> cached_reads_inline_;
  std::atomic<uint64_t> inline_reads_{0};
  std::atomic<uint64_t> backend_reads_{0};
  std::atomic<uint64_t> bounced_reads_{0};
  std::atomic<uint64_t> served_at_submit_{0};
  std::mutex slots_mu_;
  uint64_t buffer_slots_used_ = 0;  // bit i: slot i taken
  uint64_t file_slots_used_ = 0;
  std::atomic<uint64_t> inline_bytes_{0};
  std::atomic<uint64_t> backend_bytes_{0};
  std::atomic<ReadObserver*> observer_{nullptr};
};

}  // namespace sluice::io

#endif  // SLUICE_IO_ASYNC_FILE_READER_H_
