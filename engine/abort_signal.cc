#include "engine/abort_signal.h"

#include <utility>

#include "asio/async_result.hpp"
#include "asio/steady_timer.hpp"
#include "asio/this_coro.hpp"
#include "asio/use_awaitable.hpp"
#include "io/post_completion.h"

namespace sluice {

// One pending SleepFor. The timer is started and cancelled only under the
// signal's mutex, so no two threads touch it at once.
struct AbortSignal::Sleeper {
  explicit Sleeper(const asio::any_io_executor& executor) : timer(executor) {}
  virtual ~Sleeper() = default;
  // Resumes the sleeping coroutine with `slept`.
  virtual void Complete(bool slept) = 0;
  asio::steady_timer timer;
};

namespace {

template <typename Handler>
struct SleeperImpl final : AbortSignal::Sleeper {
  SleeperImpl(const asio::any_io_executor& executor, Handler h)
      : Sleeper(executor), handler(std::move(h)) {}
  void Complete(bool slept) override {
    io::PostCompletion(std::move(handler), slept);
  }
  Handler handler;
};

}  // namespace

AbortSignal::~AbortSignal() {
  for (Sleeper* sleeper : sleepers_) delete sleeper;
}

void AbortSignal::Abort() {
  std::lock_guard lock(mu_);
  aborted_.store(true, std::memory_order_release);
  for (Sleeper* sleeper : sleepers_) sleeper->timer.cancel();
}

asio::awaitable<bool> AbortSignal::SleepFor(std::chrono::nanoseconds duration) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  co_return co_await asio::async_initiate<decltype(asio::use_awaitable),
                                          void(bool)>(
      [&](auto handler) {
        std::lock_guard lock(mu_);
        if (aborted()) {
          io::PostCompletion(std::move(handler), false);
          return;
        }
        auto* sleeper =
            new SleeperImpl<decltype(handler)>(executor, std::move(handler));
        sleepers_.insert(sleeper);
        sleeper->timer.expires_after(duration);
        sleeper->timer.async_wait([this, sleeper](const asio::error_code&) {
          {
            std::lock_guard lock(mu_);
            sleepers_.erase(sleeper);
          }
          sleeper->Complete(!aborted());
          delete sleeper;
        });
      },
      asio::use_awaitable);
}

}  // namespace sluice
