// YieldToOtherCoroutines: lets the handlers already queued on the executor
// run before the calling coroutine goes on (a long loop's way of sharing
// its worker thread).
//
//   for (...) {
//     ... one unit of work ...
//     co_await YieldToOtherCoroutines();
//   }
//
// It resumes through asio::defer: the continuation joins the calling
// worker's own queue, so a yield wakes no other worker by itself. With
// asio::post every yield woke an idle worker (a futex or eventfd wake-up,
// an inter-processor interrupt in a VM) that then often took the yielding
// coroutine over, moving its data to the other core's cache. An idle worker
// is still woken when more handlers are queued than this one runs.
//
// While a trace records, the yield ends the coroutine's span on its worker
// thread and opens it again where it resumes (engine/thread_span.h);
// otherwise it costs one test more.
#ifndef SLUICE_ENGINE_YIELD_H_
#define SLUICE_ENGINE_YIELD_H_

#include "asio/awaitable.hpp"
#include "asio/defer.hpp"
#include "asio/this_coro.hpp"
#include "asio/use_awaitable.hpp"
#include "engine/thread_span.h"

namespace sluice {

inline asio::awaitable<void> YieldToOtherCoroutines() {
  if (!ThreadSpan::Enabled()) [[likely]] {
    co_await asio::defer(co_await asio::this_coro::executor,
                         asio::use_awaitable);
    co_return;
  }
  const ThreadSpan::Held held = ThreadSpan::Suspend();
  co_await asio::defer(co_await asio::this_coro::executor, asio::use_awaitable);
  ThreadSpan::Resume(held);
}

}  // namespace sluice

#endif  // SLUICE_ENGINE_YIELD_H_
