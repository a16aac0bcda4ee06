// PostCompletion: resumes an asio completion handler (for example the
// coroutine behind use_awaitable) on its associated executor, never inline.
#ifndef SLUICE_IO_POST_COMPLETION_H_
#define SLUICE_IO_POST_COMPLETION_H_

#include <utility>

#include "asio/associated_executor.hpp"
#include "asio/post.hpp"

namespace sluice::io {

// Posts `handler(result)` to the handler's associated executor.
template <typename Handler, typename Result>
void PostCompletion(Handler handler, Result result) {
  auto executor = asio::get_associated_executor(handler);
  asio::post(executor,
             [h = std::move(handler), result = std::move(result)]() mutable {
               std::move(h)(std::move(result));
             });
}

}  // namespace sluice::io

#endif  // SLUICE_IO_POST_COMPLETION_H_
