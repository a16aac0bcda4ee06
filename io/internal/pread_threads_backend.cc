#include "io/internal/pread_threads_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace sluice::io::internal {

PreadThreadsBackend::PreadThreadsBackend(unsigned threads) {
  for (unsigned i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { Serve(); });
  }
}

PreadThreadsBackend::~PreadThreadsBackend() {
  std::deque<ReadOp*> not_started;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    not_started.swap(queue_);
  }
  queued_.notify_all();
  for (ReadOp* op : not_started) op->Finish(-ECANCELED);
  for (std::thread& thread : threads_) thread.join();
}

void PreadThreadsBackend::Submit(std::span<ReadOp* const> ops) {
  {
    std::lock_guard lock(mu_);
    queue_.insert(queue_.end(), ops.begin(), ops.end());
  }
  if (ops.size() == 1) {
    queued_.notify_one();
  } else {
    queued_.notify_all();
  }
}

void PreadThreadsBackend::Cancel(std::span<ReadOp* const> ops) {
  std::vector<ReadOp*> cancelled;
  {
    std::lock_guard lock(mu_);
    // Only pointers are compared: an op that finished already is not
    // touched.
    for (ReadOp* op : ops) {
      auto it = std::find(queue_.begin(), queue_.end(), op);
      if (it == queue_.end()) continue;
      queue_.erase(it);
      cancelled.push_back(op);
    }
  }
  for (ReadOp* op : cancelled) op->Finish(-ECANCELED);
}

void PreadThreadsBackend::Serve() {
  std::unique_lock lock(mu_);
  while (true) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping
    ReadOp* op = queue_.front();
    queue_.pop_front();
    lock.unlock();
    ssize_t result;
    do {
      result =
          ::pread(op->fd, op->data, op->length, static_cast<off_t>(op->offset));
    } while (result < 0 && errno == EINTR);
    op->Finish(result < 0 ? -errno : static_cast<int>(result));
    lock.lock();
  }
}

}  // namespace sluice::io::internal
