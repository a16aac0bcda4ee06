// Executor: the one event loop a pipeline runs on — an asio io_context run
// by N worker threads, plus the file reader whose reads go through io_uring
// (or its fallback) and the pool for blocking file-system calls.
//
//   Executor executor({.threads = 2});
//   executor.Start();
//   asio::co_spawn(executor.get(), Work(), ...);
//   ...
//   executor.Stop();  // from a thread that is not one of its workers
//
// Promises: Start() launches the threads once, named "sluice-w<i>" (as
// top -H and perf show them) and, if the placement pins them, each
// restricted to its CPU (pinned_cpus(); a refusal is logged once and the
// thread floats); Stop() stops the loop, joins
// them and waits for the blocking calls under way (idempotent; the
// destructor calls it). The io_uring fallback is
// logged once per process and visible through io_backend().
#ifndef SLUICE_ENGINE_EXECUTOR_H_
#define SLUICE_ENGINE_EXECUTOR_H_

#include <optional>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "asio/any_io_executor.hpp"
#include "asio/executor_work_guard.hpp"
#include "asio/io_context.hpp"
#include "engine/worker_placement.h"
#include "io/async_file_reader.h"
#include "io/blocking_io_pool.h"

namespace sluice {

class Executor {
 public:
  struct Options {
    // Worker threads; 0 means the number of CPUs the process may use.
    unsigned threads = 0;
    // Each worker on a CPU of its own, or floating (engine/worker_placement.h).
    WorkerPlacement placement = WorkerPlacement::kAuto;
    // Try io_uring for file reads (see io::AsyncFileReader).
    bool use_io_uring = true;
  };

  explicit Executor(Options options);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Launches the worker threads; later calls do nothing.
  void Start();
  // Stops the loop and joins the workers; idempotent. Handlers not yet run
  // are dropped. Never call it from a worker thread.
  void Stop();

  asio::any_io_executor get() { return io_context_.get_executor(); }
  asio::io_context& io_context() { return io_context_; }
  io::AsyncFileReader& file_reader() { return file_reader_; }
  // For whole-file writes, fsyncs and unlinks: never on a worker thread.
  io::BlockingIoPool& blocking_io() { return blocking_io_; }
  unsigned threads() const { return threads_; }
  // The CPU of each worker thread in order, or empty when they float.
  const std::vector<int>& pinned_cpus() const { return pinned_cpus_; }
  // "io_uring" or the fallback's name.
  std::string_view io_backend() const { return file_reader_.backend_name(); }
  // True on one of this executor's worker threads.
  bool RunningInThisThread() const;

 private:
  // Options resolved against the CPUs the process may use (read once).
  Executor(Options options, std::span<const int> allowed_cpus);
  // Restricts the calling worker thread to its CPU.
  void Pin(unsigned worker);

  const unsigned threads_;
  const std::vector<int> pinned_cpus_;
  mutable asio::io_context io_context_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      work_guard_;
  io::AsyncFileReader file_reader_;
  // Declared after io_context_: destroyed (joined) before it.
  io::BlockingIoPool blocking_io_{2};
  std::vector<std::thread> workers_;
  bool started_ = false;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_EXECUTOR_H_
