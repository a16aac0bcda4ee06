// BlockingIoPool: runs file-system calls that io_uring does not cover for us
// (a whole atomic file write with fsync and rename, an unlink whose last
// reference frees a large page cache) on a few dedicated threads, so the
// executor's threads never block on them.
//
//   absl::Status status = co_await pool.Run([&] { return WriteFile(...); });
//
// Promises:
// - Run(call) runs `call` on one of the pool's threads and resumes the
//   awaiting coroutine on its own executor with call's result. The call may
//   use references to the coroutine's locals: the coroutine stays suspended
//   until the call has returned.
// - Join() (and the destructor) waits for every call started or queued.
#ifndef SLUICE_IO_BLOCKING_IO_POOL_H_
#define SLUICE_IO_BLOCKING_IO_POOL_H_

#include <type_traits>
#include <utility>

#include "asio/async_result.hpp"
#include "asio/awaitable.hpp"
#include "asio/post.hpp"
#include "asio/thread_pool.hpp"
#include "asio/use_awaitable.hpp"
#include "io/post_completion.h"

namespace sluice::io {

class BlockingIoPool {
 public:
  explicit BlockingIoPool(unsigned threads) : pool_(threads) {}
  ~BlockingIoPool() { Join(); }
  BlockingIoPool(const BlockingIoPool&) = delete;
  BlockingIoPool& operator=(const BlockingIoPool&) = delete;

  // Waits for every call started or queued, then ends the threads: call it
  // once nothing will Run() again (the executor's loop has stopped).
  // Idempotent.
  void Join() { pool_.join(); }

  // Runs `call()` on a pool thread; returns its result (not void).
  template <typename Call>
  asio::awaitable<std::invoke_result_t<Call&>> Run(Call call) {
    using Result = std::invoke_result_t<Call&>;
    co_return co_await asio::async_initiate<decltype(asio::use_awaitable),
                                            void(Result)>(
        [this, &call](auto handler) {
          asio::post(pool_, [&call, handler = std::move(handler)]() mutable {
            PostCompletion(std::move(handler), call());
          });
        },
        asio::use_awaitable);
  }

 private:
  asio::thread_pool pool_;
};

}  // namespace sluice::io

#endif  // SLUICE_IO_BLOCKING_IO_POOL_H_
