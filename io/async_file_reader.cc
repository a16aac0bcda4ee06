#include "io/async_file_reader.h"

#include <liburing.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
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

// One read in flight; Complete() resumes its coroutine and deletes it.
struct ReadOp {
  virtual ~ReadOp() = default;
  // `result` is the byte count, or -errno.
  virtual void Complete(int result) = 0;
  int fd = -1;
  uint64_t offset = 0;
  void* data = nullptr;
  unsigned length = 0;
};

template <typename Handler>
struct ReadOpImpl final : ReadOp {
  explicit ReadOpImpl(Handler h) : handler(std::move(h)) {}
  void Complete(int result) override {
    PostCompletion(std::move(handler), result);
    delete this;
  }
  Handler handler;
};

std::atomic<AsyncFileReader::FaultInjector> fault_injector{nullptr};

bool IoUringDisabledByEnvironment() {
  const char* value = std::getenv("SLUICE_DISABLE_IO_URING");
  return value != nullptr && std::string(value) != "0" && *value != '\0';
}

}  // namespace

class AsyncFileReader::Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Takes ownership of `op` and completes it exactly once.
  virtual void Submit(ReadOp* op) = 0;
};

namespace {

// Blocking preads on a small thread pool: the portable path.
class PreadThreadsBackend final : public AsyncFileReader::Backend {
 public:
  explicit PreadThreadsBackend(unsigned threads)
      : pool_(std::max(1u, threads)) {}
  ~PreadThreadsBackend() override { pool_.join(); }

  std::string_view name() const override { return "pread-threads"; }

  void Submit(ReadOp* op) override {
    asio::post(pool_, [op] {
      ssize_t result;
      do {
        result = ::pread(op->fd, op->data, op->length,
                         static_cast<off_t>(op->offset));
      } while (result < 0 && errno == EINTR);
      op->Complete(result < 0 ? -errno : static_cast<int>(result));
    });
  }

 private:
  asio::thread_pool pool_;
};

// io_uring with an eventfd that the io_context watches: completions are
// reaped on the executor, submissions are batched per executor turn.
class IoUringBackend final : public AsyncFileReader::Backend {
 public:
  // Sets up the ring; returns nullptr (and the errno text) on failure.
  static std::unique_ptr<IoUringBackend> Create(asio::io_context& io,
                                                unsigned depth,
                                                std::string* error) {
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
      *error = absl::StrCat("io_uring_register_eventfd: ", std::strerror(-reg));
      return nullptr;
    }
    return std::unique_ptr<IoUringBackend>(
        new IoUringBackend(std::move(state)));
  }

  ~IoUringBackend() override {
    std::lock_guard lock(state_->mu);
    state_->shut_down = true;
    asio::error_code ignored;
    state_->event_descriptor.close(ignored);
  }

  std::string_view name() const override { return "io_uring"; }

  void Submit(ReadOp* op) override {
    bool schedule_flush = false;
    {
      std::lock_guard lock(state_->mu);
      if (state_->in_ring < state_->depth) {
        PrepareLocked(*state_, op);
      } else {
        state_->waiting.push_back(op);
      }
      if (!state_->reaper_armed) ArmReaperLocked(state_);
      if (state_->unsubmitted > 0 && !state_->flush_scheduled) {
        state_->flush_scheduled = true;
        schedule_flush = true;
      }
    }
    if (schedule_flush) {
      asio::post(state_->io, [state = state_] {
        std::lock_guard lock(state->mu);
        state->flush_scheduled = false;
        SubmitLocked(*state);
      });
    }
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

  explicit IoUringBackend(std::shared_ptr<State> state)
      : state_(std::move(state)) {}

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

  std::shared_ptr<State> state_;
};

absl::Status ReadError(int error_number, int fd, uint64_t offset) {
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat("read of fd ", fd, " at offset ", offset,
                                   ": ", std::strerror(error_number)));
}

}  // namespace

AsyncFileReader::AsyncFileReader(asio::io_context& io_context,
                                 Options options) {
  if (options.use_io_uring && !IoUringDisabledByEnvironment()) {
    backend_ = IoUringBackend::Create(io_context, options.queue_depth,
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

void AsyncFileReader::SetFaultInjectorForTesting(FaultInjector injector) {
  fault_injector.store(injector);
}

asio::awaitable<absl::StatusOr<size_t>> AsyncFileReader::ReadAt(
    int fd, uint64_t offset, std::span<std::byte> buffer) {
  if (FaultInjector injector = fault_injector.load(std::memory_order_relaxed);
      injector != nullptr) {
    if (std::optional<int> error = injector(fd, offset)) {
      co_return ReadError(*error, fd, offset);
    }
  }
  const unsigned length =
      static_cast<unsigned>(std::min<size_t>(buffer.size(), 1u << 30));
  const int result =
      co_await asio::async_initiate<decltype(asio::use_awaitable), void(int)>(
          [&](auto handler) {
            auto* op = new ReadOpImpl<decltype(handler)>(std::move(handler));
            op->fd = fd;
            op->offset = offset;
            op->data = buffer.data();
            op->length = length;
            backend_->Submit(op);
          },
          asio::use_awaitable);
  if (result < 0) co_return ReadError(-result, fd, offset);
  co_return static_cast<size_t>(result);
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
