#include "engine/load_meter.h"

namespace sluice {

LoadMeter::LoadMeter() : last_change_(Clock::now()) {}

void LoadMeter::AdvanceLocked(Clock::time_point now) {
  const double seconds =
      std::chrono::duration<double>(now - last_change_).count();
  busy_seconds_ += seconds * busy_;
  capacity_seconds_ += seconds * alive_;
  last_change_ = now;
}

void LoadMeter::WorkerStarted() {
  std::lock_guard lock(mu_);
  AdvanceLocked(Clock::now());
  ++alive_;
  ++busy_;
}

void LoadMeter::WorkerFinished() {
  std::lock_guard lock(mu_);
  AdvanceLocked(Clock::now());
  --alive_;
  --busy_;
}

void LoadMeter::BeginWait() {
  std::lock_guard lock(mu_);
  AdvanceLocked(Clock::now());
  --busy_;
}

void LoadMeter::EndWait() {
  std::lock_guard lock(mu_);
  AdvanceLocked(Clock::now());
  ++busy_;
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
