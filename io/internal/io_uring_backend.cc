#include "io/internal/io_uring_backend.h"

#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asio/defer.hpp"
#include "asio/posix/stream_descriptor.hpp"

namespace sluice::io::internal {

struct IoUringBackend::Ring {
  explicit Ring(asio::io_context& io_context)
      : io(io_context), event_descriptor(io_context) {}
  ~Ring() {
    if (ready) io_uring_queue_exit(&ring);
  }
  asio::io_context& io;
  std::mutex mu;
  io_uring ring{};
  bool ready = false;
  bool buffer_table = false;  // registered-buffer slots set up
  bool file_table = false;    // registered-file slots set up
  unsigned depth = 0;
  unsigned in_ring = 0;        // reads and cancels not yet reaped
  unsigned reads_in_ring = 0;  // of which reads (at most depth)
  unsigned unsubmitted = 0;    // prepared, not yet submitted
  bool flush_scheduled = false;
  // The eventfd is watched only while requests are in flight, so an idle
  // reader keeps no work pending on the io_context.
  bool reaper_armed = false;
  bool shut_down = false;
  std::deque<ReadOp*> waiting;  // beyond the ring's depth
  asio::posix::stream_descriptor event_descriptor;
};

namespace {

using Ring = IoUringBackend::Ring;

// The user_data of the ring's own requests (cancels), which are no ReadOp.
char cancel_tag;
void* const kCancelTag = &cancel_tag;

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
  ++ring.in_ring;
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
  ++ring.in_ring;
  ++ring.unsubmitted;
}

void FinishCqeLocked(Ring& ring, const io_uring_cqe& cqe) {
  --ring.in_ring;
  void* data = io_uring_cqe_get_data(&cqe);
  if (data == kCancelTag) return;
  --ring.reads_in_ring;
  static_cast<ReadOp*>(data)->Finish(cqe.res);
}

// Finishes every read the completion queue holds; returns how many
// entries it took.
unsigned ReapLocked(Ring& ring) {
  unsigned head;
  unsigned seen = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring.ring, head, cqe) {
    FinishCqeLocked(ring, *cqe);
    ++seen;
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

void ArmReaperLocked(const std::shared_ptr<Ring>& ring);

// The reaper: runs on the io_context when the eventfd signals.
void Reap(const std::shared_ptr<Ring>& ring) {
  std::lock_guard lock(ring->mu);
  ring->reaper_armed = false;
  if (ring->shut_down) return;
  uint64_t counter;
  // One read resets the counter; later signals make it readable again.
  (void)::read(ring->event_descriptor.native_handle(), &counter,
               sizeof(counter));
  ReapLocked(*ring);
  RefillLocked(*ring);
  SubmitAndReapLocked(*ring);
  ArmReaperLocked(ring);
}

// Watches the eventfd while anything is in flight.
void ArmReaperLocked(const std::shared_ptr<Ring>& ring) {
  if (ring->reaper_armed || ring->shut_down || ring->in_ring == 0) return;
  ring->reaper_armed = true;
  ring->event_descriptor.async_wait(asio::posix::stream_descriptor::wait_read,
                                    [ring](const asio::error_code& error) {
                                      if (error) return;
                                      Reap(ring);
                                    });
}

// Submits a busy ring's prepared reads at the end of the executor turn.
void ScheduleFlushLocked(const std::shared_ptr<Ring>& ring) {
  if (ring->flush_scheduled || ring->unsubmitted == 0) return;
  ring->flush_scheduled = true;
  asio::defer(ring->io, [ring] {
    std::lock_guard lock(ring->mu);
    ring->flush_scheduled = false;
    if (ring->shut_down) return;
    SubmitAndReapLocked(*ring);
    ArmReaperLocked(ring);
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
    const int event_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (event_fd < 0) {
      *error = absl::StrCat("eventfd: ", std::strerror(errno));
      return nullptr;
    }
    state->event_descriptor.assign(event_fd);
    rc = io_uring_register_eventfd(&state->ring, event_fd);
    if (rc < 0) {
      *error = absl::StrCat("io_uring_register_eventfd: ", std::strerror(-rc));
      return nullptr;
    }
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
    asio::error_code ignored;
    ring->event_descriptor.close(ignored);
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
  ArmReaperLocked(ring);
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
    ArmReaperLocked(ring);
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
