#include "engine/load_meter.h"

#include "engine/thread_span.h"
#include "engine/trace_recorder.h"

namespace sluice {

LoadMeter::LoadMeter() : last_change_(Clock::now()) {}

void LoadMeter::AdvanceLocked(Clock::time_point now) {
  const double seconds =
      std::chrono::duration<double>(now - last_change_).count();
  busy_seconds_ += seconds * busy_;
  total_busy_seconds_ += seconds * busy_;
  capacity_seconds_ += seconds * alive_;
  last_change_ = now;
}

void LoadMeter::BusyUpLocked(Clock::time_point now) {
  ++busy_;
  if (trace_ != nullptr) [[unlikely]] {
    trace_->RecordBusyCount(trace_stage_, now, busy_);
    ThreadSpan::Open(trace_, trace_stage_, now);
  }
}

void LoadMeter::BusyDownLocked(Clock::time_point now) {
  --busy_;
  if (trace_ != nullptr) [[unlikely]] {
    trace_->RecordBusyCount(trace_stage_, now, busy_);
    ThreadSpan::Close(trace_, now);
  }
}

void LoadMeter::WorkerStarted() {
  std::lock_guard lock(mu_);
  const Clock::time_point now = Clock::now();
  AdvanceLocked(now);
  ++alive_;
  BusyUpLocked(now);
}

void LoadMeter::WorkerFinished() {
  std::lock_guard lock(mu_);
  const Clock::time_point now = Clock::now();
  AdvanceLocked(now);
  --alive_;
  BusyDownLocked(now);
}

void LoadMeter::BeginWait() {
  std::lock_guard lock(mu_);
  const Clock::time_point now = Clock::now();
  AdvanceLocked(now);
  BusyDownLocked(now);
}

void LoadMeter::EndWait() {
  std::lock_guard lock(mu_);
  const Clock::time_point now = Clock::now();
  AdvanceLocked(now);
  BusyUpLocked(now);
}

double LoadMeter::TotalBusySeconds() {
  std::lock_guard lock(mu_);
  AdvanceLocked(Clock::now());
  return total_busy_seconds_;
}

void LoadMeter::TraceInto(TraceRecorder* trace, uint32_t stage) {
  std::lock_guard lock(mu_);
  trace_ = trace;
  trace_stage_ = stage;
}

LoadMetricProto LoadMeter::Flush() {
  std::lock_guard lock(mu_);
  AdvanceLocked(Clock::now());
  LoadMetricProto metrics;
  metrics.set_busy_seconds(busy_seconds_);
  metrics.set_capacity_seconds(capacity_seconds_);
  metrics.set_load(capacity_seconds_ > 0 ? busy_seconds_ / capacity_seconds_
                                         : 0.0);
  metrics.set_workers(alive_);
  busy_seconds_ = 0;
  capacity_seconds_ = 0;
  return metrics;
}

}  // namespace sluice
