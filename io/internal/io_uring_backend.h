// IoUringBackend: io::AsyncFileReader's reads through io_uring rings
// driven by liburing, each ring's fd watched by the io_context's reactor.
//
// How a read completes:
// - Submitted to an idle ring (no read in flight in it), it is submitted at
//   once on the calling thread; a read the kernel serves while submitting
//   (the page cache holds it) is reaped right away, before Submit returns:
//   one io_uring_enter, no epoll, no other thread.
// - Submitted to a busy ring, it is prepared and submitted with the others
//   of the same executor turn (one io_uring_enter for all), and again
//   reaped at once if the kernel served it then.
// - A read that waits for the disk (O_DIRECT, or pages the readahead has
//   not brought in yet) completes later: the ring's fd turns
//   readable, the reactor's epoll_wait returns it, and the reaper (a
//   ReactorWatch operation, io/internal/reactor_watch.h: registered once,
//   re-armed without a system call) reaps the ring. The first read it
//   reaps resumes its coroutine inside the reaper's own handler; the
//   others are deferred to later turns. A waiting read so costs one
//   io_uring_enter and two epoll_wait: its completion runs as task work of
//   the submitting thread, which interrupts that thread's epoll_wait
//   (EINTR) before the completion is posted and the next epoll_wait
//   returns it. fio, which has nothing else to wait for, waits in
//   io_uring_enter itself.
// - Beyond `depth` reads in a ring, reads wait in submission order and go
//   in as earlier ones are reaped.
// - Work: a ring with requests in it holds work of the io_context (run()
//   does not return); an idle ring holds none, even while the reaper stays
//   armed.
// - Cancel: a read still waiting finishes with -ECANCELED at once; one in
//   the ring gets an IORING_OP_ASYNC_CANCEL and finishes when the kernel
//   lets go of its buffer (-ECANCELED, or its result if it won the race).
// - Destruction cancels every read, waits until the kernel has finished
//   them all and finishes each (their coroutines resume, or are destroyed
//   with the io_context if it no longer runs).
//
// Ring flags, the cheapest the kernel takes: IORING_SETUP_COOP_TASKRUN
// (the task work of a cold read does not interrupt a submitting thread
// that is busy in user space; it runs at that thread's next entry into the
// kernel, and a thread asleep, e.g. in the reactor's epoll_wait, is still
// woken for it) and IORING_SETUP_SUBMIT_ALL (one bad read does not hold
// back the others of a submission). Not used: DEFER_TASKRUN, which needs a
// single submitting thread per ring and a system call to post each batch
// of completions; a registered ring fd, which is valid only in the thread
// that registered it (and measured no gain beyond noise on 64 KiB reads).
#ifndef SLUICE_IO_INTERNAL_IO_URING_BACKEND_H_
#define SLUICE_IO_INTERNAL_IO_URING_BACKEND_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asio/io_context.hpp"
#include "io/internal/read_backend.h"

namespace sluice::io::internal {

class IoUringBackend final : public ReadBackend {
 public:
  // Slots in each ring's tables of registered buffers and files.
  static constexpr int kRegisteredSlots = 64;

  // Sets up `rings` rings of `depth` entries whose completions are reaped
  // on `io`; nullptr (and the reason in *error) when the kernel refuses.
  static std::unique_ptr<IoUringBackend> Create(asio::io_context& io,
                                                unsigned depth, unsigned rings,
                                                std::string* error);
  ~IoUringBackend() override;

  std::string_view name() const override { return "io_uring"; }
  std::string features() const override { return features_; }
  void Submit(std::span<ReadOp* const> ops) override;
  void Cancel(std::span<ReadOp* const> ops) override;
  absl::Status SetRegisteredBuffer(int index,
                                   std::span<std::byte> region) override;
  absl::Status SetRegisteredFile(int index, int fd) override;

  struct Ring;

 private:
  IoUringBackend(std::vector<std::shared_ptr<Ring>> rings,
                 std::string features);

  std::vector<std::shared_ptr<Ring>> rings_;
  const std::string features_;
};

}  // namespace sluice::io::internal

#endif  // SLUICE_IO_INTERNAL_IO_URING_BACKEND_H_
