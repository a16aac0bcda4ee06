// PreadThreadsBackend: io::AsyncFileReader's portable path — blocking
// preads on a few threads of its own, for kernels and sandboxes that forbid
// io_uring.
//
// Promises: reads are started in submission order; a read not yet started
// is cancelled at once (it finishes with -ECANCELED), one under way runs to
// its end. Destruction cancels what has not started and waits for the rest.
#ifndef SLUICE_IO_INTERNAL_PREAD_THREADS_BACKEND_H_
#define SLUICE_IO_INTERNAL_PREAD_THREADS_BACKEND_H_

#include <condition_variable>
#include <deque>
#include <mutex>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "io/internal/read_backend.h"

namespace sluice::io::internal {

class PreadThreadsBackend final : public ReadBackend {
 public:
  // Starts `threads` threads. With none, reads wait until cancelled or
  // the backend is destroyed (a fixed state for tests of cancellation).
  explicit PreadThreadsBackend(unsigned threads);
  ~PreadThreadsBackend() override;

  std::string_view name() const override { return "pread-threads"; }
  void Submit(std::span<ReadOp* const> ops) override;
  void Cancel(std::span<ReadOp* const> ops) override;

 private:
  // One thread: reads what is queued until stopped.
  void Serve();

  std::mutex mu_;
  std::condition_variable queued_;
  std::deque<ReadOp*> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace sluice::io::internal

#endif  // SLUICE_IO_INTERNAL_PREAD_THREADS_BACKEND_H_
