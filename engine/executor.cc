#include "engine/executor.h"

#include <pthread.h>

#include <mutex>
#include <span>
#include <string>

#include "engine/log.h"

namespace sluice {
namespace {

unsigned ResolveThreads(unsigned requested, std::span<const int> allowed) {
  return requested > 0 ? requested : static_cast<unsigned>(allowed.size());
}

io::AsyncFileReader::Options ReaderOptions(bool use_io_uring) {
  io::AsyncFileReader::Options options;
  options.use_io_uring = use_io_uring;
  return options;
}

}  // namespace

Executor::Executor(Options options) : Executor(options, AllowedCpus()) {}

Executor::Executor(Options options, std::span<const int> allowed_cpus)
    : threads_(ResolveThreads(options.threads, allowed_cpus)),
      pinned_cpus_(PinnedCpus(options.placement, threads_, allowed_cpus,
                              ProcessNiceness())),
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
      if (!pinned_cpus_.empty()) Pin(i);
      io_context_.run();
    });
  }
}

void Executor::Pin(unsigned worker) {
  const int cpu = pinned_cpus_[worker];
  if (PinCurrentThread(cpu)) return;
  static std::once_flag logged;
  std::call_once(logged, [cpu] {
    LogWarning("could not pin a worker thread to CPU ", cpu,
               " (the OS refused); the workers float");
  });
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
