// Pipeline's metrics: the snapshot taken every metrics interval (and at
// Stop), the totals and history kept with it, and what GetMetrics and the
// Prometheus exporter read.
#include <memory>
#include <utility>
#include <vector>

#include "engine/metrics_accumulator.h"
#include "engine/metrics_exporter.h"
#include "engine/pipeline.h"
#include "engine/process_stats.h"

namespace sluice {

asio::awaitable<void> Pipeline::MetricsLoop() {
  const auto interval = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(options_.metrics_interval_seconds()));
  while (co_await abort_.SleepFor(interval)) TakeSnapshot();
}

void Pipeline::TakeSnapshot() {
  std::lock_guard lock(metrics_mu_);
  const auto now = std::chrono::steady_clock::now();
  DataLoaderMetricsProto snapshot;
  snapshot.set_interval_seconds(
      std::chrono::duration<double>(now - last_snapshot_at_).count());
  snapshot.set_elapsed_seconds(
      std::chrono::duration<double>(now - started_at_).count());
  snapshot.set_snapshot_index(latest_->snapshot_index() +
                              (has_snapshot_ ? 1 : 0));
  if (executor_ != nullptr) {
    snapshot.set_io_backend(std::string(executor_->io_backend()));
    const io::AsyncFileReader::Counts reads = executor_->file_reader().counts();
    snapshot.set_reads_from_page_cache(reads.inline_reads);
    snapshot.set_reads_through_backend(reads.backend_reads);
    snapshot.set_reads_served_at_submit(reads.served_at_submit);
    snapshot.set_reads_bounced_for_direct_io(reads.bounced_reads);
    snapshot.set_bytes_from_page_cache(reads.inline_bytes);
    snapshot.set_bytes_through_backend(reads.backend_bytes);
  }
  snapshot.set_rss_bytes(ReadResidentBytes());
  if (memory_plan_.has_value())
    *snapshot.mutable_memory_budget() = *memory_plan_;
  if (autotune_metrics_.has_value())
    *snapshot.mutable_autotune() = *autotune_metrics_;
  totals_.resize(stages_.size());
  for (size_t i = 0; i < stages_.size(); ++i) {
    StageMetricProto interval = stages_[i]->FlushMetrics();
    AccumulateMetrics(interval, &totals_[i]);
    *snapshot.add_stage_metrics() = std::move(interval);
    *snapshot.add_total_stage_metrics() = totals_[i];
  }
  // Snapshots taken before Start() are not part of the run.
  if (executor_ != nullptr) history_.Add(snapshot);
  last_snapshot_at_ = now;
  latest_ = std::make_shared<const DataLoaderMetricsProto>(std::move(snapshot));
  has_snapshot_ = true;
}

std::vector<MetricsHistory::Sample> Pipeline::GetHistory() {
  std::lock_guard lock(metrics_mu_);
  return history_.Samples();
}

DataLoaderMetricsProto Pipeline::GetMetrics() {
  bool need_snapshot;
  {
    std::lock_guard lock(metrics_mu_);
    need_snapshot = !has_snapshot_;
  }
  if (need_snapshot) TakeSnapshot();
  DataLoaderMetricsProto metrics;
  {
    std::lock_guard lock(metrics_mu_);
    metrics = *latest_;
  }
  if (absl::Status failure = status(); !failure.ok()) {
    metrics.set_error(std::string(failure.message()));
  }
  return metrics;
}

uint16_t Pipeline::metrics_port() const {
  return metrics_exporter_ != nullptr ? metrics_exporter_->port() : 0;
}

std::shared_ptr<const DataLoaderMetricsProto> Pipeline::LatestSnapshot() {
  std::shared_ptr<const DataLoaderMetricsProto> latest;
  {
    std::lock_guard lock(metrics_mu_);
    latest = latest_;
  }
  if (absl::Status failure = status(); !failure.ok()) {
    auto failed = std::make_shared<DataLoaderMetricsProto>(*latest);
    failed->set_error(std::string(failure.message()));
    return failed;
  }
  return latest;
}

}  // namespace sluice
