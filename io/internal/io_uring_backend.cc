#include "io/internal/io_uring_backend.h"

#include <liburing.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asio/defer.hpp"
#include "asio/executor_work_guard.hpp"
#include "io/internal/reactor_watch.h"

namespace sluice::io::internal {

struct IoUringBackend::Ring final : ReactorWatch::Target,
                                    std::enable_shared_from_this<Ring> {
  explicit Ring(asio::io_context& io_context) : io(io_context) {}
  ~Ring() override {
    watch.reset();  // before the fd closes
    if (ready) io_uring_queue_exit(&ring);
  }
  // Completions wait in the queue (lock-free: the kernel posts them, the
  // reaper takes them under `mu`).
  bool Ready() const override {
    return __atomic_load_n(ring.cq.ktail, __ATOMIC_ACQUIRE) !=
           __atomic_load_n(ring.cq.khead, __ATOMIC_ACQUIRE);
  }
  // The reaper (below).
  void OnReady() override;
  asio::io_context& io;
  std::mutex mu;
  io_uring ring{};
  bool ready = false;
  bool buffer_table = false;  // registered-buffer slots set up
  bool file_table = false;    // registered-file slots set up
  unsigned depth = 0;
  unsigned in_ring = 0;        // reads and cancels not yet reaped
  unsigned reads_in_ring = 0;  // of which reads (at most depth)
  uint64_t reads_reaped = 0;   // ever
  unsigned unsubmitted = 0;    // prepared, not yet submitted
  bool flush_scheduled = false;
  // Work of the io_context while anything is in the ring (the watch itself
  // is not work): run() returns once the ring is idle, whoever reaped it.
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      busy;
  // The reaper waits in the reactor (the watch armed). It may stay armed
  // after a submitting thread reaped the last completions; the next
  // completion then wakes it.
  bool reaper_armed = false;
  bool shut_down = false;
  std::deque<ReadOp*> waiting;  // beyond the ring's depth
  std::unique_ptr<ReactorWatch> watch;
};

namespace {

using Ring = IoUringBackend::Ring;

// The user_data of the ring's own requests (cancels), which are no ReadOp.
char cancel_tag;
void* const kCancelTag = &cancel_tag;

// One more request in the ring.
void AddInRingLocked(Ring& ring) {
  if (ring.in_ring++ == 0) ring.busy.emplace(ring.io.get_executor());
}

// One request less in the ring.
void RemoveInRingLocked(Ring& ring) {
  if (--ring.in_ring == 0) ring.busy.reset();
}

void SubmitLocked(Ring& ring) {
  if (ring.unsubmitted == 0) return;
  int rc;
  do {
    rc = io_uring_submit(&ring.ring);
  } while (rc == -EINTR || rc == -EAGAIN);
  if (rc > 0) ring.unsubmitted -= std::min<unsigned>(rc, ring.unsubmitted);
}

// A free submission entry; nullptr only if the kernel takes none.
io_uring_sqe* GetSqeLocked(Ring& ring) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring.ring);
  if (sqe == nullptr) {
    SubmitLocked(ring);
    sqe = io_uring_get_sqe(&ring.ring);
  }
  return sqe;
}

void PrepareLocked(Ring& ring, ReadOp* op) {
  io_uring_sqe* sqe = GetSqeLocked(ring);
  const bool fixed_file = op->file_index >= 0 && ring.file_table;
  const int fd = fixed_file ? op->file_index : op->fd;
  if (op->buffer_index >= 0 && ring.buffer_table) {
    io_uring_prep_read_fixed(sqe, fd, op->data, op->length, op->offset,
                             op->buffer_index);
  } else {
    io_uring_prep_read(sqe, fd, op->data, op->length, op->offset);
  }
  if (fixed_file) sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data(sqe, op);
  AddInRingLocked(ring);
  ++ring.reads_in_ring;
  ++ring.unsubmitted;
}

// Asks the kernel to cancel the request whose user_data is `target` (or
// every request, with IORING_ASYNC_CANCEL_ANY in `flags`).
void PrepareCancelLocked(Ring& ring, void* target, int flags) {
  io_uring_sqe* sqe = GetSqeLocked(ring);
  if (sqe == nullptr) return;  // the read will finish on its own
  io_uring_prep_cancel(sqe, target, flags);
  io_uring_sqe_set_data(sqe, kCancelTag);
  AddInRingLocked(ring);
  ++ring.unsubmitted;
}

// Takes one completion off the ring's books; returns its read, or null for
// a cancel request.
ReadOp* TakeCqeLocked(Ring& ring, const io_uring_cqe& cqe) {
  RemoveInRingLocked(ring);
  void* data = io_uring_cqe_get_data(&cqe);
  if (data == kCancelTag) return nullptr;
  --ring.reads_in_ring;
  ++ring.reads_reaped;
  return static_cast<ReadOp*>(data);
}

void FinishCqeLocked(Ring& ring, const io_uring_cqe& cqe) {
  if (ReadOp* op = TakeCqeLocked(ring, cqe)) op->Finish(cqe.res);
}

// A read reaped but not yet finished: the reaper finishes one after
// unlocking, so that its coroutine may resume on the reaper's own turn.
struct HeldRead {
  ReadOp* op = nullptr;
  int result = 0;
};

// Finishes every read the completion queue holds (but the first, when
// `held` is given: it is stored there); returns how many entries it took.
unsigned ReapLocked(Ring& ring, HeldRead* held = nullptr) {
  unsigned head;
  unsigned seen = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring.ring, head, cqe) {
    ++seen;
    ReadOp* op = TakeCqeLocked(ring, *cqe);
    if (op == nullptr) continue;
    if (held != nullptr && held->op == nullptr) {
      *held = {op, cqe->res};
    } else {
      op->Finish(cqe->res);
    }
  }
  if (seen > 0) io_uring_cq_advance(&ring.ring, seen);
  return seen;
}

// Moves waiting reads into the ring while it has room.
void RefillLocked(Ring& ring) {
  while (!ring.waiting.empty() && ring.reads_in_ring < ring.depth) {
    PrepareLocked(ring, ring.waiting.front());
    ring.waiting.pop_front();
  }
}

// Submits what is prepared and reaps what the kernel served meanwhile,
// until neither makes progress.
void SubmitAndReapLocked(Ring& ring) {
  while (true) {
    SubmitLocked(ring);
    if (ReapLocked(ring) == 0) return;
    RefillLocked(ring);
    if (ring.unsubmitted == 0 && ring.in_ring == 0) return;
  }
}

// Watches the ring while anything is in flight.
void ArmReaperLocked(Ring& ring) {
  if (ring.reaper_armed || ring.shut_down || ring.in_ring == 0) return;
  ring.reaper_armed = true;
  ring.watch->Arm(ring.shared_from_this());
}

}  // namespace

// The reaper: runs on the io_context when the ring has completions. When
// it finishes a single read, that read's coroutine resumes right here, in
// the reaper's own handler (no further turn of the loop). When it finishes
// several, all resume on later turns: what a handler defers waits until
// the handler returns, so one coroutine run inline would hold the others
// back from the executor's other threads.
void IoUringBackend::Ring::OnReady() {
  HeldRead held;
  bool alone = false;
  {
    std::lock_guard lock(mu);
    reaper_armed = false;
    if (shut_down) return;
    const uint64_t reaped_before = reads_reaped;
    ReapLocked(*this, &held);
    RefillLocked(*this);
    SubmitAndReapLocked(*this);
    ArmReaperLocked(*this);
    alone = reads_reaped - reaped_before == 1;
  }
  if (held.op != nullptr) {
    held.op->Finish(held.result, alone ? ReadOp::Resume::kMayRunInline
                                       : ReadOp::Resume::kLater);
  }
}

namespace {

// Submits a busy ring's prepared reads at the end of the executor turn.
void ScheduleFlushLocked(const std::shared_ptr<Ring>& ring) {
  if (ring->flush_scheduled || ring->unsubmitted == 0) return;
  ring->flush_scheduled = true;
  asio::defer(ring->io, [ring] {
    std::lock_guard lock(ring->mu);
    ring->flush_scheduled = false;
    if (ring->shut_down) return;
    SubmitAndReapLocked(*ring);
    ArmReaperLocked(*ring);
  });
}

absl::Status RegisterError(const char* what, int rc) {
  return absl::Status(absl::ErrnoToStatusCode(-rc),
                      absl::StrCat(what, ": ", std::strerror(-rc)));
}

}  // namespace

std::unique_ptr<IoUringBackend> IoUringBackend::Create(asio::io_context& io,
                                                       unsigned depth,
                                                       unsigned rings,
                                                       std::string* error) {
  std::vector<std::shared_ptr<Ring>> states;
  std::vector<std::string> features;
  for (unsigned r = 0; r < std::max(1u, rings); ++r) {
    auto state = std::make_shared<Ring>(io);
    // The cheapest flags this kernel takes: COOP_TASKRUN (5.19),
    // SUBMIT_ALL (5.18), else none.
    io_uring_params params{};
    int rc = -EINVAL;
    for (const unsigned flags :
         {IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN,
          unsigned{IORING_SETUP_SUBMIT_ALL}, 0u}) {
      params = {};
      params.flags = flags;
      rc = io_uring_queue_init_params(depth, &state->ring, &params);
      if (rc != -EINVAL) break;
    }
    if (rc < 0) {
      *error = absl::StrCat("io_uring_queue_init: ", std::strerror(-rc));
      return nullptr;
    }
    state->ready = true;
    state->depth = depth;
    absl::StatusOr<std::unique_ptr<ReactorWatch>> watch =
        ReactorWatch::Create(io, state->ring.ring_fd);
    if (!watch.ok()) {
      *error = std::string(watch.status().message());
      return nullptr;
    }
    state->watch = *std::move(watch);
    // Sparse tables (kernel 5.19+): slots filled as buffers and files are
    // registered. Without them, reads simply do not use registrations.
    state->buffer_table =
        io_uring_register_buffers_sparse(&state->ring, kRegisteredSlots) == 0;
    state->file_table =
        io_uring_register_files_sparse(&state->ring, kRegisteredSlots) == 0;
    if (r == 0) {
      if (params.flags & IORING_SETUP_COOP_TASKRUN) {
        features.push_back("coop_taskrun");
      }
      if (params.flags & IORING_SETUP_SUBMIT_ALL) {
        features.push_back("submit_all");
      }
      if (state->buffer_table) features.push_back("registered_buffers");
      if (state->file_table) features.push_back("registered_files");
    }
    states.push_back(std::move(state));
  }
  return std::unique_ptr<IoUringBackend>(
      new IoUringBackend(std::move(states), absl::StrJoin(features, " ")));
}

IoUringBackend::IoUringBackend(std::vector<std::shared_ptr<Ring>> rings,
                               std::string features)
    : rings_(std::move(rings)), features_(std::move(features)) {}

IoUringBackend::~IoUringBackend() {
  for (const std::shared_ptr<Ring>& ring : rings_) {
    std::lock_guard lock(ring->mu);
    ring->shut_down = true;
    while (!ring->waiting.empty()) {
      ReadOp* op = ring->waiting.front();
      ring->waiting.pop_front();
      op->Finish(-ECANCELED);
    }
    if (ring->in_ring > 0) {
      PrepareCancelLocked(*ring, nullptr, IORING_ASYNC_CANCEL_ANY);
      SubmitLocked(*ring);
    }
    // The kernel writes into the reads' buffers until their completions
    // are posted: wait for every one.
    while (ring->in_ring > 0) {
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_wait_cqe(&ring->ring, &cqe);
      if (rc == -EINTR) continue;
      if (rc < 0) break;
      FinishCqeLocked(*ring, *cqe);
      io_uring_cqe_seen(&ring->ring, cqe);
    }
    ring->busy.reset();  // even if the wait failed
    ring->watch.reset();
  }
}

// The ops go to one ring: the first one not locked by another thread, else
// the first one.
void IoUringBackend::Submit(std::span<ReadOp* const> ops) {
  std::unique_lock<std::mutex> lock;
  const std::shared_ptr<Ring>* chosen = &rings_.front();
  for (const std::shared_ptr<Ring>& ring : rings_) {
    lock = std::unique_lock(ring->mu, std::try_to_lock);
    if (lock.owns_lock()) {
      chosen = &ring;
      break;
    }
  }
  if (!lock.owns_lock()) lock = std::unique_lock(rings_.front()->mu);
  const std::shared_ptr<Ring>& ring = *chosen;
  const bool idle = ring->in_ring == 0;
  for (ReadOp* op : ops) {
    if (ring->reads_in_ring < ring->depth && ring->waiting.empty()) {
      PrepareLocked(*ring, op);
    } else {
      ring->waiting.push_back(op);
    }
  }
  if (idle) {
    SubmitAndReapLocked(*ring);
  } else {
    ScheduleFlushLocked(ring);
  }
  ArmReaperLocked(*ring);
}

void IoUringBackend::Cancel(std::span<ReadOp* const> ops) {
  for (const std::shared_ptr<Ring>& ring : rings_) {
    std::lock_guard lock(ring->mu);
    if (ring->shut_down) continue;
    for (ReadOp* op : ops) {
      // Only pointers are compared: an op that finished is not touched.
      auto it = std::find(ring->waiting.begin(), ring->waiting.end(), op);
      if (it != ring->waiting.end()) {
        ring->waiting.erase(it);
        op->Finish(-ECANCELED);
      } else if (ring->reads_in_ring > 0) {
        PrepareCancelLocked(*ring, op, 0);
      }
    }
    SubmitAndReapLocked(*ring);
    ArmReaperLocked(*ring);
  }
}

absl::Status IoUringBackend::SetRegisteredBuffer(int index,
                                                 std::span<std::byte> region) {
  for (const std::shared_ptr<Ring>& ring : rings_) {
    std::lock_guard lock(ring->mu);
    if (!ring->buffer_table) {
      return absl::UnimplementedError(
          "this kernel has no sparse registered-buffer tables (5.19+)");
    }
    iovec iov{region.data(), region.size()};
    __u64 tag = 0;
    const int rc =
        io_uring_register_buffers_update_tag(&ring->ring, index, &iov, &tag, 1);
    if (rc < 0) return RegisterError("io_uring_register_buffers_update", rc);
  }
  return absl::OkStatus();
}

absl::Status IoUringBackend::SetRegisteredFile(int index, int fd) {
  for (const std::shared_ptr<Ring>& ring : rings_) {
    std::lock_guard lock(ring->mu);
    if (!ring->file_table) {
      return absl::UnimplementedError(
          "this kernel has no sparse registered-file tables (5.19+)");
    }
    const int rc = io_uring_register_files_update(&ring->ring, index, &fd, 1);
    if (rc < 0) return RegisterError("io_uring_register_files_update", rc);
  }
  return absl::OkStatus();
}

}  // namespace sluice::io::internal
