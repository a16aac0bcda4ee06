// PostCompletion: resumes an asio completion handler (for example the
// coroutine behind use_awaitable) on its associated executor, never inline.
// It uses asio::defer: called on one of the executor's own threads, the
// resumption joins that thread's private queue (no lock, no wake-up of
// another thread) and runs once the current handler returns; asio spreads
// it to idle threads when more work is queued.
#ifndef SLUICE_IO_POST_COMPLETION_H_
#define SLUICE_IO_POST_COMPLETION_H_

#include <utility>

#include "asio/associated_executor.hpp"
#include "asio/defer.hpp"

namespace sluice::io {

// Schedules `handler(result)` on the handler's associated executor.
template <typename Handler, typename Result>
void PostCompletion(Handler handler, Result result) {
  auto executor = asio::get_associated_executor(handler);
  asio::defer(executor,
              [h = std::move(handler), result = std::move(result)]() mutable {
                std::move(h)(std::move(result));
              });
}

}  // namespace sluice::io

#endif  // SLUICE_IO_POST_COMPLETION_H_
