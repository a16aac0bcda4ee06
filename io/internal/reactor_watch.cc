#include "io/internal/reactor_watch.h"

#include <cstring>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "asio/detail/reactor.hpp"
#include "asio/detail/reactor_op.hpp"
#include "asio/detail/scheduler.hpp"
#include "asio/error.hpp"

namespace sluice::io::internal {
namespace {

using Reactor = asio::detail::reactor;
// The speculative, syscall-free Arm below is what epoll_reactor::start_op
// does for a read operation; other reactors are not supported.
static_assert(std::is_same_v<Reactor, asio::detail::epoll_reactor>,
              "ReactorWatch needs asio's epoll reactor");

// The operation left in the reactor's queue: done once the target is
// ready; then it completes on the io_context (or is dropped).
class ReadyOp : public asio::detail::reactor_op {
 public:
  explicit ReadyOp(std::shared_ptr<ReactorWatch::Target> target)
      : reactor_op(asio::error_code(), &ReadyOp::Perform, &ReadyOp::Complete),
        target_(std::move(target)) {}

 private:
  static status Perform(reactor_op* base) {
    return static_cast<ReadyOp*>(base)->target_->Ready() ? done : not_done;
  }

  // `owner` (the scheduler) is null when the io_context drops the
  // operation unrun; ec_ is operation_aborted when the watch was destroyed
  // first.
  static void Complete(void* owner, asio::detail::scheduler_operation* base,
                       const asio::error_code& /*ec*/, std::size_t) {
    auto* op = static_cast<ReadyOp*>(base);
    // The scheduler ends one unit of work after this; Arm gave it back.
    if (owner != nullptr) {
      static_cast<asio::detail::scheduler*>(owner)->work_started();
    }
    std::shared_ptr<ReactorWatch::Target> target = std::move(op->target_);
    const bool run = owner != nullptr && !op->ec_;
    delete op;
    if (run) target->OnReady();
  }

  std::shared_ptr<ReactorWatch::Target> target_;
};

}  // namespace

struct ReactorWatch::Registration {
  asio::detail::scheduler& scheduler;
  Reactor& reactor;
  int fd;
  Reactor::per_descriptor_data data = nullptr;
};

absl::StatusOr<std::unique_ptr<ReactorWatch>> ReactorWatch::Create(
    asio::io_context& io, int fd) {
  Reactor& reactor = asio::use_service<Reactor>(io);
  reactor.init_task();
  auto registration = std::make_unique<Registration>(
      Registration{.scheduler = asio::use_service<asio::detail::scheduler>(io),
                   .reactor = reactor,
                   .fd = fd});
  if (const int error = reactor.register_descriptor(fd, registration->data)) {
    reactor.cleanup_descriptor_data(registration->data);
    return absl::InternalError(absl::StrCat(
        "cannot watch descriptor ", fd, " with epoll: ", std::strerror(error)));
  }
  return std::unique_ptr<ReactorWatch>(
      new ReactorWatch(std::move(registration)));
}

ReactorWatch::ReactorWatch(std::unique_ptr<Registration> registration)
    : registration_(std::move(registration)) {}

ReactorWatch::~ReactorWatch() {
  Registration& r = *registration_;
  r.reactor.deregister_descriptor(r.fd, r.data, /*closing=*/false);
  r.reactor.cleanup_descriptor_data(r.data);
}

void ReactorWatch::Arm(std::shared_ptr<Target> target) {
  Registration& r = *registration_;
  r.reactor.start_op(Reactor::read_op, r.fd, r.data,
                     new ReadyOp(std::move(target)),
                     /*is_continuation=*/true, /*allow_speculative=*/true);
  // start_op counted the operation as work; a watch is not work.
  r.scheduler.work_finished();
}

}  // namespace sluice::io::internal
