// ReactorWatch: a pollable descriptor that is not a socket (an io_uring
// ring's fd) watched by the io_context's own reactor, asio's epoll.
//
//   absl::StatusOr<std::unique_ptr<ReactorWatch>> watch =
//       ReactorWatch::Create(io_context, ring_fd);
//   (*watch)->Arm(target);  // target->OnReady() runs on the io_context once
//                           // target->Ready() holds
//
// Why not a stream_descriptor's async_wait: each async_wait re-arms the
// descriptor with an epoll_ctl, and its handler is one more turn of the
// loop. Arm() costs no system call: it asks Ready() at once (a completion
// already there is handled without waiting) and otherwise leaves one
// operation in the reactor's queue for the descriptor, registered once,
// edge-triggered, for its whole life.
//
// Promises:
// - After Arm(target), target->OnReady() runs exactly once on a thread
//   running the io_context, once Ready() returned true (checked at Arm and
//   whenever the descriptor signals readiness), unless the watch is
//   destroyed first or the io_context is destroyed: then it never runs.
// - An armed watch is not work of the io_context: alone it lets run()
//   return. Whoever waits for the descriptor keeps work of its own (an
//   executor_work_guard) for as long as it waits.
// - Ready() may run on any thread, concurrently with anything: it must be
//   a lock-free check. Arm() may be called with the caller's locks held as
//   long as OnReady() does not need them before Arm returns (OnReady runs
//   later, never inside Arm).
// - The target stays alive (shared_ptr) until OnReady ran or was dropped.
// - Destroy the watch before the io_context (it deregisters the
//   descriptor; a pending Arm is then dropped).
#ifndef SLUICE_IO_INTERNAL_REACTOR_WATCH_H_
#define SLUICE_IO_INTERNAL_REACTOR_WATCH_H_

#include <memory>

#include "absl/status/statusor.h"
#include "asio/io_context.hpp"

namespace sluice::io::internal {

class ReactorWatch {
 public:
  // What a watch waits for and what it runs.
  class Target {
   public:
    virtual ~Target() = default;
    // True when there is something for OnReady (lock-free, any thread).
    virtual bool Ready() const = 0;
    // Runs on the io_context after Ready() held.
    virtual void OnReady() = 0;
  };

  // Registers `fd` (not owned; it must outlive the watch) with the
  // reactor of `io`.
  static absl::StatusOr<std::unique_ptr<ReactorWatch>> Create(
      asio::io_context& io, int fd);
  ~ReactorWatch();
  ReactorWatch(const ReactorWatch&) = delete;
  ReactorWatch& operator=(const ReactorWatch&) = delete;

  // Runs target->OnReady() once when target->Ready() (see above). At most
  // one Arm may be pending at a time.
  void Arm(std::shared_ptr<Target> target);

 private:
  struct Registration;
  explicit ReactorWatch(std::unique_ptr<Registration> registration);

  std::unique_ptr<Registration> registration_;
};

}  // namespace sluice::io::internal

#endif  // SLUICE_IO_INTERNAL_REACTOR_WATCH_H_
