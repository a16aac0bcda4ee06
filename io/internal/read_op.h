// ReadOp and ReadWaiter: one read handed to a backend of
// io::AsyncFileReader, and the coroutine side that waits for one or more of
// them.
//
//   ReadWaiter waiter(1);
//   ReadOp op{.fd = fd, .offset = 0, .data = p, .length = n, .waiter =
//   &waiter}; backend.Submit(std::span(&op_pointer, 1));  // may complete op at
//   once if (!waiter.done()) co_await waiter.Wait(); use(op.result);
//
// Promises:
// - A backend calls Finish(result) exactly once per op, from any thread;
//   the waiter's coroutine resumes on its own executor once the last op of
//   the waiter has finished, unless that happened before it suspended: then
//   Wait() is not needed (done() is true) and nothing is posted. It resumes
//   on a later turn of the executor, or, with Resume::kMayRunInline (a
//   backend finishing from a handler of its own, holding no lock), inside
//   Finish when Finish runs on that executor.
// - Cancellation: while suspended in Wait(), an emitted cancellation (the
//   coroutine's cancellation slot) asks the backend to cancel the waiter's
//   ops; each still finishes exactly once (with -ECANCELED when it was
//   cancelled in time), and the coroutine resumes after the last one, so
//   buffers are never written after it resumed.
#ifndef SLUICE_IO_INTERNAL_READ_OP_H_
#define SLUICE_IO_INTERNAL_READ_OP_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "asio/associated_cancellation_slot.hpp"
#include "asio/async_result.hpp"
#include "asio/awaitable.hpp"
#include "asio/cancellation_type.hpp"
#include "asio/defer.hpp"
#include "asio/dispatch.hpp"
#include "asio/use_awaitable.hpp"

namespace sluice::io::internal {

class ReadWaiter;

// One read in flight. The fields are set before Submit and stay unchanged
// until Finish; `result` is written by Finish.
struct ReadOp {
  int fd = -1;
  uint64_t offset = 0;
  void* data = nullptr;
  unsigned length = 0;
  // Slots in the backend's tables of registered buffers and files, or -1.
  int buffer_index = -1;
  int file_index = -1;
  // Bytes read, or -errno.
  int result = 0;
  ReadWaiter* waiter = nullptr;
  // Where Finish adds the bytes the read delivered to its caller, or null:
  // those of the result past `delivered_lead`, at most `delivered_cap` (a
  // read through an aligned bounce buffer starts before the request and
  // may end after it). Counted here, not by the awaiting coroutine, which
  // may resume after its reader is gone.
  std::atomic<uint64_t>* delivered_bytes = nullptr;
  unsigned delivered_lead = 0;
  unsigned delivered_cap = ~0u;

  // How the waiter's coroutine may resume when this op is its last.
  enum class Resume { kLater, kMayRunInline };

  // Stores `bytes_or_error` and tells the waiter (any thread, once).
  inline void Finish(int bytes_or_error, Resume resume = Resume::kLater);
};

// Cancels ops that a backend holds; see Backend::Cancel.
class OpCanceller {
 public:
  virtual ~OpCanceller() = default;
  // Asks for each of `ops` to finish soon; they still finish exactly once.
  virtual void Cancel(std::span<ReadOp* const> ops) = 0;
};

// Counts the ops of one ReadAt or ReadBatchAt still out and resumes the
// coroutine that awaits them.
class ReadWaiter {
 public:
  using Handler =
      asio::async_result<asio::use_awaitable_t<>, void()>::handler_type;

  explicit ReadWaiter(size_t ops) : remaining_(ops) {}
  ReadWaiter(const ReadWaiter&) = delete;
  ReadWaiter& operator=(const ReadWaiter&) = delete;

  // True once every op has finished (the results may be read).
  bool done() const { return state_.load(std::memory_order_acquire) == kDone; }

  // Suspends until every op has finished. `ops` and `canceller` serve an
  // emitted cancellation; both must outlive the wait.
  asio::awaitable<void> Wait(std::span<ReadOp* const> ops,
                             OpCanceller& canceller) {
    return asio::async_initiate<decltype(asio::use_awaitable), void()>(
        [this, ops, &canceller](Handler handler) {
          Park(std::move(handler), ops, canceller);
        },
        asio::use_awaitable);
  }

  // One op finished (any thread); `resume` as for ReadOp::Finish.
  void OneFinished(ReadOp::Resume resume) {
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    // The last one: resume the coroutine if it parked. Nothing of `this`
    // is touched after the exchange unless the coroutine is parked (then it
    // cannot run, so neither can its frame go away, until posted).
    if (state_.exchange(kDone, std::memory_order_acq_rel) == kParked) {
      ResumeParked(resume);
    }
  }

 private:
  enum State : int { kRunning, kParked, kDone };

  // Cancels the ops when the coroutine's cancellation slot emits.
  struct CancelHandler {
    // A constructor, not aggregate initialization: the cancellation slot
    // builds the handler with parentheses, which clang before 16 refuses
    // for aggregates.
    CancelHandler(std::span<ReadOp* const> ops, OpCanceller* canceller)
        : ops(ops), canceller(canceller) {}
    void operator()(asio::cancellation_type type) const {
      if (type != asio::cancellation_type::none) canceller->Cancel(ops);
    }
    std::span<ReadOp* const> ops;
    OpCanceller* canceller;
  };

  void Park(Handler handler, std::span<ReadOp* const> ops,
            OpCanceller& canceller) {
    handler_.emplace(std::move(handler));
    asio::cancellation_slot slot =
        asio::get_associated_cancellation_slot(*handler_);
    if (slot.is_connected()) slot.emplace<CancelHandler>(ops, &canceller);
    int expected = kRunning;
    if (!state_.compare_exchange_strong(expected, kParked,
                                        std::memory_order_acq_rel)) {
      ResumeParked(ReadOp::Resume::kLater);  // finished meanwhile elsewhere
    }
  }

  // Hands the parked handler to its executor (which clears the
  // cancellation slot as it resumes the coroutine): deferred, or run here
  // when allowed and this thread runs that executor.
  void ResumeParked(ReadOp::Resume resume) {
    Handler handler = std::move(*handler_);
    handler_.reset();
    auto executor = asio::get_associated_executor(handler);
    if (resume == ReadOp::Resume::kMayRunInline) {
      asio::dispatch(executor, std::move(handler));
    } else {
      asio::defer(executor, std::move(handler));
    }
  }

  std::atomic<size_t> remaining_;
  std::atomic<int> state_{kRunning};
  std::optional<Handler> handler_;
};

void ReadOp::Finish(int bytes_or_error, Resume resume) {
  result = bytes_or_error;
  if (delivered_bytes != nullptr && bytes_or_error > 0 &&
      static_cast<unsigned>(bytes_or_error) > delivered_lead) {
    delivered_bytes->fetch_add(
        std::min(static_cast<unsigned>(bytes_or_error) - delivered_lead,
                 delivered_cap),
        std::memory_order_relaxed);
  }
  waiter->OneFinished(resume);
}

}  // namespace sluice::io::internal

#endif  // SLUICE_IO_INTERNAL_READ_OP_H_
