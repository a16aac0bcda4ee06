// IoUringBackend: io::AsyncFileReader's reads through io_uring rings
// driven by liburing, each with an eventfd that the io_context watches.
//
// How a read completes:
// - Submitted to an idle ring (no read in flight in it), it is submitted at
//   once on the calling thread; a read the kernel serves while submitting
//   (the page cache holds it) is reaped right away, before Submit returns:
//   one io_uring_enter, no eventfd, no epoll, no other thread.
// - Submitted to a busy ring, it is prepared and submitted with the others
//   of the same executor turn (one io_uring_enter for all), and again
//   reaped at once if the kernel served it then.
// - A read that waits for the disk completes later: the kernel signals the
//   ring's eventfd (also for completions run as task work on the
//   submitting thread, which is why the eventfd is not the async-only
//   kind), the io_context's reactor runs the reaper, which finishes it.
// - Beyond `depth` reads in a ring, reads wait in submission order and go
//   in as earlier ones are reaped.
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
// single submitting thread per ring; a registered ring fd, which is valid
// only in the thread that registered it (and measured no gain beyond noise
// on 64 KiB reads); the async-only eventfd, which stays silent for the
// task-work completions of cold and O_DIRECT reads.
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
