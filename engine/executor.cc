#include "engine/executor.h"

#include <pthread.h>

#include <mutex>
#include <string>

#include "engine/log.h"

namespace sluice {
namespace {

unsigned ResolveThreads(unsigned requested) {
  if (requested > 0) return requested;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? cores : 1;
}

io::AsyncFileReader::Options ReaderOptions(bool use_io_uring) {
  io::AsyncFileReader::Options options;
  options.use_io_uring = use_io_uring;
  return options;
}

}  // namespace

Executor::Executor(Options options)
    : threads_(ResolveThreads(options.threads)),
      io_context_(static_cast<int>(threads_)),
      work_guard_(io_context_.get_executor()),
      file_reader_(io_context_, ReaderOptions(options.use_io_uring)) {
  if (!file_reader_.uses_io_uring()) {
    static std::once_flag logged;
    std::call_once(logged, [this] {
      LogWarning("io_uring not in use (", file_reader_.fallback_reason(),
                 "); file reads use ", file_reader_.backend_name());
    });
  }
}

Executor::~Executor() { Stop(); }

void Executor::Start() {
  if (started_) return;
  started_ = true;
  workers_.reserve(threads_);
  for (unsigned i = 0; i < threads_; ++i) {
    workers_.emplace_back([this, i] {
      // Named for top -H, perf and the benchmarks' per-thread accounting
      // (at most 15 characters).
      const std::string name = "sluice-w" + std::to_string(i);
      ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
      io_context_.run();
    });
  }
}

void Executor::Stop() {
  work_guard_.reset();
  io_context_.stop();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  // Blocking calls may use their callers' state (a stage's buffers): they
  // finish before Stop() returns, so before the pipeline drops its stages.
  blocking_io_.Join();
}

bool Executor::RunningInThisThread() const {
  return io_context_.get_executor().running_in_this_thread();
}

}  // namespace sluice
