// LoadMeter: how busy a stage's coroutines are.
//
// Each coroutine of a stage reports when it starts and finishes, and when it
// suspends on a channel or on I/O (BeginWait/EndWait). The meter integrates
// the number of working coroutines over wall time, so
//   load = busy coroutine-seconds / (alive coroutine-seconds)
// is near 1 for a stage that never waits and near 0 for a starved one.
//
//   meter.BeginWait();
//   auto bytes = co_await reader.ReadAt(fd, offset, buffer);
//   meter.EndWait();
//
// All methods are thread-safe; they take a mutex and read the clock, so call
// them on slow paths only (channels call them only when they suspend).
//
// With a trace (TraceInto), the meter records at the same points and with
// the same clock readings the count of busy coroutines (a counter whose
// integral over time is its busy_seconds) and, on the calling thread, the
// start and end of the stage's span on that worker thread
// (engine/thread_span.h).
#ifndef SLUICE_ENGINE_LOAD_METER_H_
#define SLUICE_ENGINE_LOAD_METER_H_

#include <chrono>
#include <cstdint>
#include <mutex>

#include "proto/data_loader_metrics.pb.h"

namespace sluice {

class TraceRecorder;  // engine/trace_recorder.h

class LoadMeter {
 public:
  LoadMeter();

  // A coroutine of the stage started (working) or finished.
  void WorkerStarted();
  void WorkerFinished();
  // A working coroutine suspends to wait, or resumes after waiting.
  void BeginWait();
  void EndWait();

  // Busy and capacity seconds since the previous Flush (the first Flush
  // counts from construction), and the coroutines alive now.
  LoadMetricProto Flush();

  // Busy coroutine-seconds since construction (never reset by Flush), for
  // readers that take differences on their own schedule (the autotuner).
  double TotalBusySeconds();

  // Records the busy count and thread spans into `trace` as stage `stage`
  // from now on. Call before the stage's coroutines start.
  void TraceInto(TraceRecorder* trace, uint32_t stage);

 private:
  using Clock = std::chrono::steady_clock;
  // Adds the time since last_change_ to the integrals. Needs mu_.
  void AdvanceLocked(Clock::time_point now);
  // One more or one fewer busy coroutine at `now`. Need mu_.
  void BusyUpLocked(Clock::time_point now);
  void BusyDownLocked(Clock::time_point now);

  std::mutex mu_;
  Clock::time_point last_change_;
  int alive_ = 0;
  int busy_ = 0;
  double busy_seconds_ = 0;
  double capacity_seconds_ = 0;
  double total_busy_seconds_ = 0;
  // With a trace: where the busy count and thread spans go.
  TraceRecorder* trace_ = nullptr;
  uint32_t trace_stage_ = 0;
};

// Marks the enclosing scope as waiting: BeginWait now, EndWait on exit.
class ScopedWait {
 public:
  explicit ScopedWait(LoadMeter* meter) : meter_(meter) {
    if (meter_ != nullptr) meter_->BeginWait();
  }
  ~ScopedWait() {
    if (meter_ != nullptr) meter_->EndWait();
  }
  ScopedWait(const ScopedWait&) = delete;
  ScopedWait& operator=(const ScopedWait&) = delete;

 private:
  LoadMeter* meter_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_LOAD_METER_H_
