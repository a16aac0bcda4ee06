#include "engine/load_meter.h"

#include <algorithm>

#include "engine/trace_recorder.h"

namespace sluice {

LoadMeter::LoadMeter() : last_change_(Clock::now()) {}

void LoadMeter::AdvanceLocked(Clock::time_point now) {
  const double seconds =
      std::chrono::duration<double>(now - last_change_).count();
  busy_seconds_ += seconds * busy_;
  capacity_seconds_ += seconds * alive_;
  last_change_ = now;
}

void LoadMeter::BusyUpLocked(Clock::time_point now) {
  if (trace_ != nullptr) [[unlikely]] {
    if (slot_began_.size() <= static_cast<size_t>(busy_)) {
      slot_began_.resize(busy_ + 1);
    }
    slot_began_[busy_] = now;
  }
  ++busy_;
}

void LoadMeter::BusyDownLocked(Clock::time_point now) {
  --busy_;
  if (trace_ != nullptr) [[unlikely]] {
    trace_->RecordBusy(trace_stage_, busy_, slot_began_[busy_], now);
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

void LoadMeter::TraceInto(TraceRecorder* trace, uint32_t stage) {
  std::lock_guard lock(mu_);
  trace_ = trace;
  trace_stage_ = stage;
  slot_began_.assign(static_cast<size_t>(std::max(busy_, 0)), Clock::now());
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
