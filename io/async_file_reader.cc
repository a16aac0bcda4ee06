#include "io/async_file_reader.h"

#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "asio/async_result.hpp"
#include "asio/posix/stream_descriptor.hpp"
#include "asio/post.hpp"
#include "asio/thread_pool.hpp"
#include "asio/use_awaitable.hpp"
#include "io/post_completion.h"

namespace sluice::io {
namespace {

// One read in flight; Complete() hands its result to the batch it is part
// of (ReadBatchOp).
struct ReadOp {
  virtual ~ReadOp() = default;
  // `result` is the byte count, or -errno.
  virtual void Complete(int result) = 0;
  int fd = -1;
  uint64_t offset = 0;
  void* data = nullptr;
  unsigned length = 0;
};

// Reads that resume one handler, with every result, once the last of them
// completes (from whichever thread completes it); then deletes itself.
template <typename Handler>
struct ReadBatchOp {
  struct Part final : ReadOp {
    void Complete(int result) override { batch->Finish(index, result); }
    ReadBatchOp* batch = nullptr;
    size_t index = 0;
  };

  ReadBatchOp(Handler h, size_t size)
      : handler(std::move(h)), parts(size), results(size), remaining(size) {
    for (size_t i = 0; i < size; ++i) {
      parts[i].batch = this;
      parts[i].index = i;
    }
  }

  void Finish(size_t index, int result) {
    results[index] = result;
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      PostCompletion(std::move(handler), std::move(results));
      delete this;
    }
  }

  Handler handler;
  std::vector<Part> parts;
  std::vector<int> results;
  std::atomic<size_t> remaining;
};

std::atomic<AsyncFileReader::FaultInjector> fault_injector{nullptr};

// The most one read call asks for (the ring's length field is 32 bits).
constexpr size_t kMaxReadBytes = size_t{1} << 30;

bool IoUringDisabledByEnvironment() {
  const char* value = std::getenv("SLUICE_DISABLE_IO_URING");
  return value != nullptr && std::string(value) != "0" && *value != '\0';
}

}  // namespace

class AsyncFileReader::Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Takes ownership of `ops` and completes each exactly once.
  virtual void Submit(std::span<ReadOp* const> ops) = 0;
};

namespace {

// Blocking preads on a small thread pool: the portable path.
class PreadThreadsBackend final : public AsyncFileReader::Backend {
 public:
  explicit PreadThreadsBackend(unsigned threads)
      : pool_(std::max(1u, threads)) {}
  ~PreadThreadsBackend() override { pool_.join(); }

  std::string_view name() const override { return "pread-threads"; }

  void Submit(std::span<ReadOp* const> ops) override {
    for (ReadOp* op : ops) {
      asio::post(pool_, [op] {
        ssize_t result;
        do {
          result = ::pread(op->fd, op->data, op->length,
                           static_cast<off_t>(op->offset));
        } while (result < 0 && errno == EINTR);
        op->Complete(result < 0 ? -errno : static_cast<int>(result));
      });
    }
  }

 private:
  asio::thread_pool pool_;
};

// io_uring rings, each with an eventfd that the io_context watches:
// completions are reaped on the executor, submissions are batched per
// executor turn. Reads of the page cache are copied while the ring is
// entered, under its lock: several rings let several threads copy at once.
class IoUringBackend final : public AsyncFileReader::Backend {
 public:
  // Sets up `rings` rings; returns nullptr (and the errno text) on failure.
  static std::unique_ptr<IoUringBackend> Create(asio::io_context& io,
                                                unsigned depth, unsigned rings,
                                                std::string* error) {
    std::vector<std::shared_ptr<State>> states;
    for (unsigned r = 0; r < std::max(1u, rings); ++r) {
      auto state = std::make_shared<State>(io);
      const int rc = io_uring_queue_init(depth, &state->ring, 0);
      if (rc < 0) {
        *error = absl::StrCat("io_uring_queue_init: ", std::strerror(-rc));
        return nullptr;
      }
      state->ring_ready = true;
      state->depth = depth;
      const int event_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (event_fd < 0) {
        *error = absl::StrCat("eventfd: ", std::strerror(errno));
        return nullptr;
      }
      state->event_descriptor.assign(event_fd);
      const int reg = io_uring_register_eventfd(&state->ring, event_fd);
      if (reg < 0) {
        *error =
            absl::StrCat("io_uring_register_eventfd: ", std::strerror(-reg));
        return nullptr;
      }
      states.push_back(std::move(state));
    }
    return std::unique_ptr<IoUringBackend>(
        new IoUringBackend(std::move(states)));
  }

  ~IoUringBackend() override {
    for (const std::shared_ptr<State>& state : states_) {
      std::lock_guard lock(state->mu);
      state->shut_down = true;
      asio::error_code ignored;
      state->event_descriptor.close(ignored);
    }
  }

  std::string_view name() const override { return "io_uring"; }

  // The ops go to one ring: the first one not locked by another thread (a
  // thread copying reads into memory), else the first one.
  void Submit(std::span<ReadOp* const> ops) override {
    for (const std::shared_ptr<State>& state : states_) {
      std::unique_lock lock(state->mu, std::try_to_lock);
      if (lock.owns_lock()) {
        SubmitTo(state, std::move(lock), ops);
        return;
      }
    }
    SubmitTo(states_.front(), std::unique_lock(states_.front()->mu), ops);
  }

 private:
  struct State {
    explicit State(asio::io_context& io_context)
        : io(io_context), event_descriptor(io_context) {}
    ~State() {
      if (ring_ready) io_uring_queue_exit(&ring);
    }
    asio::io_context& io;
    std::mutex mu;
    io_uring ring{};
    bool ring_ready = false;
    unsigned depth = 0;
    unsigned in_ring = 0;      // prepared or submitted, not yet reaped
    unsigned unsubmitted = 0;  // prepared, not yet submitted
    bool flush_scheduled = false;
    // The eventfd is watched only while reads are in flight, so an idle
    // reader keeps no work pending on the io_context.
    bool reaper_armed = false;
    bool shut_down = false;
    std::deque<ReadOp*> waiting;  // beyond the ring's depth
    asio::posix::stream_descriptor event_descriptor;
  };

  explicit IoUringBackend(std::vector<std::shared_ptr<State>> states)
      : states_(std::move(states)) {}

  // Queues `ops` on `state`, whose lock `lock` holds, and schedules a flush.
  static void SubmitTo(const std::shared_ptr<State>& state,
                       std::unique_lock<std::mutex> lock,
                       std::span<ReadOp* const> ops) {
    for (ReadOp* op : ops) {
      if (state->in_ring < state->depth && state->waiting.empty()) {
        PrepareLocked(*state, op);
      } else {
        state->waiting.push_back(op);
      }
    }
    if (!state->reaper_armed) ArmReaperLocked(state);
    if (state->unsubmitted == 0 || state->flush_scheduled) return;
    state->flush_scheduled = true;
    lock.unlock();
    asio::post(state->io, [state] {
      std::lock_guard flush_lock(state->mu);
      state->flush_scheduled = false;
      SubmitLocked(*state);
    });
  }

  static void PrepareLocked(State& state, ReadOp* op) {
    io_uring_sqe* sqe = io_uring_get_sqe(&state.ring);
    io_uring_prep_read(sqe, op->fd, op->data, op->length, op->offset);
    io_uring_sqe_set_data(sqe, op);
    ++state.in_ring;
    ++state.unsubmitted;
  }

  static void SubmitLocked(State& state) {
    if (state.unsubmitted == 0) return;
    int rc;
    do {
      rc = io_uring_submit(&state.ring);
    } while (rc == -EINTR || rc == -EAGAIN);
    if (rc >= 0) state.unsubmitted -= std::min<unsigned>(rc, state.unsubmitted);
  }

  static void ArmReaperLocked(const std::shared_ptr<State>& state) {
    state->reaper_armed = true;
    state->event_descriptor.async_wait(
        asio::posix::stream_descriptor::wait_read,
        [state](const asio::error_code& error) {
          if (error) return;
          Reap(state);
        });
  }

  static void Reap(const std::shared_ptr<State>& state) {
    std::vector<std::pair<ReadOp*, int>> done;
    {
      std::lock_guard lock(state->mu);
      if (state->shut_down) return;
      uint64_t counter;
      while (::read(state->event_descriptor.native_handle(), &counter,
                    sizeof(counter)) > 0) {
      }
      io_uring_cqe* cqe;
      while (io_uring_peek_cqe(&state->ring, &cqe) == 0) {
        done.emplace_back(static_cast<ReadOp*>(io_uring_cqe_get_data(cqe)),
                          cqe->res);
        io_uring_cqe_seen(&state->ring, cqe);
        --state->in_ring;
      }
      while (!state->waiting.empty() && state->in_ring < state->depth) {
        PrepareLocked(*state, state->waiting.front());
        state->waiting.pop_front();
      }
      SubmitLocked(*state);
      if (state->in_ring > 0) {
        ArmReaperLocked(state);
      } else {
        state->reaper_armed = false;
      }
    }
    for (auto& [op, result] : done) op->Complete(result);
  }

  std::vector<std::shared_ptr<State>> states_;
};

// Tells `observer` of a finished ReadBatchAt.
void Observe(AsyncFileReader::ReadObserver* observer,
             std::chrono::steady_clock::time_point begin,
             const std::vector<absl::StatusOr<size_t>>& results,
             size_t from_page_cache) {
  uint64_t bytes = 0;
  for (const absl::StatusOr<size_t>& result : results) {
    if (result.ok()) bytes += *result;
  }
  observer->OnReads(begin, std::chrono::steady_clock::now(), results.size(),
                    bytes, from_page_cache);
}

absl::Status ReadError(int error_number, int fd, uint64_t offset) {
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat("read of fd ", fd, " at offset ", offset,
                                   ": ", std::strerror(error_number)));
}

}  // namespace

AsyncFileReader::AsyncFileReader(asio::io_context& io_context, Options options)
    : cached_reads_inline_(options.cached_reads_inline) {
  if (options.use_io_uring && !IoUringDisabledByEnvironment()) {
    const unsigned rings =
        options.rings != 0
            ? options.rings
            : std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    backend_ = IoUringBackend::Create(io_context, options.queue_depth, rings,
                                      &fallback_reason_);
  } else {
    fallback_reason_ = options.use_io_uring
                           ? "disabled by SLUICE_DISABLE_IO_URING"
                           : "disabled by configuration";
  }
  if (backend_ == nullptr) {
    backend_ = std::make_unique<PreadThreadsBackend>(options.fallback_threads);
  }
}

AsyncFileReader::~AsyncFileReader() = default;

std::string_view AsyncFileReader::backend_name() const {
  return backend_->name();
}

bool AsyncFileReader::uses_io_uring() const {
  return backend_name() == "io_uring";
}

AsyncFileReader::Counts AsyncFileReader::counts() const {
  return {.inline_reads = inline_reads_.load(std::memory_order_relaxed),
          .backend_reads = backend_reads_.load(std::memory_order_relaxed),
          .inline_bytes = inline_bytes_.load(std::memory_order_relaxed),
          .backend_bytes = backend_bytes_.load(std::memory_order_relaxed)};
}

std::optional<size_t> AsyncFileReader::CopyCached(const ReadRequest& request) {
  iovec part{request.buffer.data(),
             std::min<size_t>(request.buffer.size(), kMaxReadBytes)};
  ssize_t got;
  do {
    got = ::preadv2(request.fd, &part, 1, static_cast<off_t>(request.offset),
                    RWF_NOWAIT);
  } while (got < 0 && errno == EINTR);
  if (got >= 0) return static_cast<size_t>(got);
  // EAGAIN: not all in the page cache. Any other error is the backend's to
  // report; only a missing syscall (old kernels, seccomp) turns this off.
  if (errno == ENOSYS) {
    cached_reads_inline_.store(false, std::memory_order_relaxed);
  }
  return std::nullopt;
}

void AsyncFileReader::SetFaultInjectorForTesting(FaultInjector injector) {
  fault_injector.store(injector);
}

asio::awaitable<absl::StatusOr<size_t>> AsyncFileReader::ReadAt(
    int fd, uint64_t offset, std::span<std::byte> buffer) {
  const ReadRequest request{fd, offset, buffer};
  std::vector<absl::StatusOr<size_t>> results =
      co_await ReadBatchAt(std::span(&request, 1));
  co_return std::move(results.front());
}

asio::awaitable<std::vector<absl::StatusOr<size_t>>>
AsyncFileReader::ReadBatchAt(std::span<const ReadRequest> requests) {
  ReadObserver* const observer = observer_.load(std::memory_order_acquire);
  const auto begin = observer != nullptr
                         ? std::chrono::steady_clock::now()
                         : std::chrono::steady_clock::time_point();
  std::vector<absl::StatusOr<size_t>> results(requests.size());
  // The requests that go to the backend (not failed by the injector, not
  // served whole from the page cache), and what of each was copied already.
  std::vector<size_t> issued;
  std::vector<size_t> copied;
  size_t from_page_cache = 0;
  FaultInjector injector = fault_injector.load(std::memory_order_relaxed);
  for (size_t i = 0; i < requests.size(); ++i) {
    const ReadRequest& request = requests[i];
    if (injector != nullptr) {
      if (std::optional<int> error = injector(request.fd, request.offset)) {
        results[i] = ReadError(*error, request.fd, request.offset);
        continue;
      }
    }
    size_t cached = 0;
    if (cached_reads_inline_.load(std::memory_order_relaxed)) {
      if (std::optional<size_t> got = CopyCached(request)) {
        inline_reads_.fetch_add(1, std::memory_order_relaxed);
        inline_bytes_.fetch_add(*got, std::memory_order_relaxed);
        // A short copy stops at end of file or at a page not yet cached:
        // the backend reads the rest (and finds end of file if it is).
        if (*got == 0 || *got == request.buffer.size()) {
          results[i] = *got;
          ++from_page_cache;
          continue;
        }
        cached = *got;
      }
    }
    issued.push_back(i);
    copied.push_back(cached);
  }
  if (issued.empty()) {
    if (observer != nullptr) Observe(observer, begin, results, from_page_cache);
    co_return results;
  }
  backend_reads_.fetch_add(issued.size(), std::memory_order_relaxed);
  const std::vector<int> done =
      co_await asio::async_initiate<decltype(asio::use_awaitable),
                                    void(std::vector<int>)>(
          [&](auto handler) {
            auto* batch = new ReadBatchOp<decltype(handler)>(std::move(handler),
                                                             issued.size());
            std::vector<ReadOp*> ops(issued.size());
            for (size_t k = 0; k < issued.size(); ++k) {
              const ReadRequest& request = requests[issued[k]];
              ReadOp& op = batch->parts[k];
              op.fd = request.fd;
              op.offset = request.offset + copied[k];
              op.data = request.buffer.data() + copied[k];
              op.length = static_cast<unsigned>(std::min<size_t>(
                  request.buffer.size() - copied[k], kMaxReadBytes));
              ops[k] = &op;
            }
            backend_->Submit(ops);
          },
          asio::use_awaitable);
  uint64_t backend_bytes = 0;
  for (size_t k = 0; k < issued.size(); ++k) {
    const ReadRequest& request = requests[issued[k]];
    if (done[k] >= 0) {
      backend_bytes += static_cast<uint64_t>(done[k]);
      results[issued[k]] = copied[k] + static_cast<size_t>(done[k]);
    } else if (copied[k] > 0) {
      results[issued[k]] = copied[k];  // a short read; the next one fails
    } else {
      results[issued[k]] = ReadError(-done[k], request.fd, request.offset);
    }
  }
  backend_bytes_.fetch_add(backend_bytes, std::memory_order_relaxed);
  if (observer != nullptr) Observe(observer, begin, results, from_page_cache);
  co_return results;
}

asio::awaitable<absl::StatusOr<size_t>> AsyncFileReader::ReadFullyAt(
    int fd, uint64_t offset, std::span<std::byte> buffer) {
  size_t total = 0;
  while (total < buffer.size()) {
    absl::StatusOr<size_t> got =
        co_await ReadAt(fd, offset + total, buffer.subspan(total));
    if (!got.ok()) co_return got.status();
    if (*got == 0) break;
    total += *got;
  }
  co_return total;
}

}  // namespace sluice::io
