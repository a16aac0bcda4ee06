#include "engine/wake_signal.h"

#include <utility>

#include "asio/async_result.hpp"
#include "asio/error.hpp"
#include "asio/experimental/as_tuple.hpp"
#include "asio/this_coro.hpp"
#include "asio/use_awaitable.hpp"
#include "io/post_completion.h"

namespace sluice {

void WakeSignal::Notify() {
  std::lock_guard lock(mu_);
  notified_ = true;
  if (waiting_ != nullptr) waiting_->cancel();
}

asio::awaitable<bool> WakeSignal::WaitFor(std::chrono::nanoseconds timeout) {
  asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
  auto token = asio::experimental::as_tuple(asio::use_awaitable);
  [[maybe_unused]] auto result =
      co_await asio::async_initiate<decltype(token), void(asio::error_code)>(
          [&](auto handler) {
            std::lock_guard lock(mu_);
            if (notified_) {
              io::PostCompletion(
                  std::move(handler),
                  asio::error_code(asio::error::operation_aborted));
              return;
            }
            // Started under the lock: a Notify() either came before (seen
            // above) or finds this wait to cancel.
            waiting_ = &timer;
            timer.async_wait(std::move(handler));
          },
          token);
  std::lock_guard lock(mu_);
  waiting_ = nullptr;
  co_return std::exchange(notified_, false);
}

}  // namespace sluice
