#include "bindings/cli/live_view.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "absl/strings/str_format.h"

namespace sluice::cli {
namespace {

// The stage whose first output feeds the pipeline's first output.
std::string OutputStageName(const DataLoaderConfig& config) {
  std::string reference;
  if (config.output_size() > 0) {
    reference = config.output(0);
    if (const size_t colon = reference.find(':'); colon != std::string::npos) {
      reference = reference.substr(colon + 1);
    }
  } else if (config.stage_size() > 0) {
    reference = config.stage(config.stage_size() - 1).name();
  }
  return reference.substr(0, reference.find('.'));
}

const StageMetricProto* FindStage(
    const google::protobuf::RepeatedPtrField<StageMetricProto>& stages,
    std::string_view name) {
  for (const StageMetricProto& stage : stages) {
    if (stage.name() == name) return &stage;
  }
  return nullptr;
}

uint64_t SkippedTotal(const StageMetricProto& stage) {
  uint64_t total = 0;
  for (const SkipCountProto& skip : stage.skipped()) total += skip.count();
  return total;
}

std::string LoadBar(double load) {
  constexpr int kWidth = 10;
  const int filled =
      std::clamp(static_cast<int>(load * kWidth + 0.5), 0, kWidth);
  return std::string(filled, '#') + std::string(kWidth - filled, '.');
}

std::string Rate(double per_second) {
  if (per_second >= 1e6) return absl::StrFormat("%.2fM", per_second / 1e6);
  if (per_second >= 1e4) return absl::StrFormat("%.1fk", per_second / 1e3);
  return absl::StrFormat("%.0f", per_second);
}

}  // namespace

Throughput ComputeThroughput(const DataLoaderConfig& config,
                             const DataLoaderMetricsProto& metrics,
                             bool totals) {
  const auto& stages =
      totals ? metrics.total_stage_metrics() : metrics.stage_metrics();
  const double seconds =
      totals ? metrics.elapsed_seconds() : metrics.interval_seconds();
  Throughput throughput;
  if (seconds <= 0) return throughput;
  if (const StageMetricProto* output =
          FindStage(stages, OutputStageName(config));
      output != nullptr && output->output_queue_metrics_size() > 0) {
    throughput.batches_per_second =
        output->output_queue_metrics(0).get_count() / seconds;
  }
  uint64_t positions = 0;
  for (const StageMetricProto& stage : stages) {
    positions += stage.tensor_generator().positions();
  }
  throughput.positions_per_second = positions / seconds;
  return throughput;
}

std::string FindBottleneck(const DataLoaderConfig& config,
                           const DataLoaderMetricsProto& metrics,
                           const ChannelFill& fill) {
  const auto& totals = metrics.total_stage_metrics();
  std::string best;
  double best_load = -1;
  for (const StageConfig& stage : config.stage()) {
    const StageMetricProto* own = FindStage(totals, stage.name());
    if (own == nullptr) continue;
    bool starved = false;
    for (const std::string& input : stage.input()) {
      const std::string key =
          input.find('.') == std::string::npos ? input + ".output" : input;
      if (auto it = fill.find(key); it != fill.end() && it->second < 0.25) {
        starved = true;
      }
    }
    if (!starved && own->load().load() > best_load) {
      best_load = own->load().load();
      best = stage.name();
    }
  }
  return best;
}

LiveView::LiveView(const DataLoaderConfig& config, std::ostream& out,
                   bool interactive)
    : config_(config), out_(out), interactive_(interactive) {}

void LiveView::Render(const DataLoaderMetricsProto& metrics) {
  if (static_cast<int64_t>(metrics.snapshot_index()) == last_snapshot_) return;
  last_snapshot_ = static_cast<int64_t>(metrics.snapshot_index());
  RecordFill(metrics);
  if (interactive_) {
    RenderTable(metrics);
  } else {
    RenderLine(metrics);
  }
  out_.flush();
}

void LiveView::RenderTable(const DataLoaderMetricsProto& metrics) {
  if (lines_drawn_ > 0) out_ << "\x1b[" << lines_drawn_ << "F";
  const Throughput rate = ComputeThroughput(config_, metrics, false);
  std::string frame = absl::StrFormat(
      "\x1b[1msluice\x1b[0m  %8.1fs elapsed   %s batches/s   %s positions/s"
      "   io: %s\x1b[K\n",
      metrics.elapsed_seconds(), Rate(rate.batches_per_second),
      Rate(rate.positions_per_second), metrics.io_backend());
  frame += absl::StrFormat("%-18s %-24s %-16s %10s %15s %8s %8s\x1b[K\n",
                           "stage", "type", "load", "items/s", "output fill",
                           "drops", "errors");
  int lines = 2;
  for (const StageMetricProto& stage : metrics.stage_metrics()) {
    const double seconds = std::max(metrics.interval_seconds(), 1e-9);
    uint64_t put = 0, drops = 0, size = 0, capacity = 0;
    for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
      put += queue.put_count();
      drops += queue.drop_count();
      size += queue.size();
      capacity += queue.capacity();
    }
    frame += absl::StrFormat(
        "%-18s %-24s [%s] %4.2f %10s %7d/%-7d %8d %8d\x1b[K\n", stage.name(),
        stage.type(), LoadBar(stage.load().load()), stage.load().load(),
        Rate(put / seconds), size, capacity, drops, SkippedTotal(stage));
    ++lines;
  }
  out_ << frame;
  lines_drawn_ = lines;
}

void LiveView::RenderLine(const DataLoaderMetricsProto& metrics) {
  const Throughput rate = ComputeThroughput(config_, metrics, false);
  std::string line = absl::StrFormat(
      "[%7.1fs] %s batches/s, %s positions/s |", metrics.elapsed_seconds(),
      Rate(rate.batches_per_second), Rate(rate.positions_per_second));
  for (const StageMetricProto& stage : metrics.stage_metrics()) {
    line += absl::StrFormat(" %s load %.2f", stage.name(), stage.load().load());
    for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
      line += absl::StrFormat(" fill %d/%d", queue.size(), queue.capacity());
    }
    line += ";";
  }
  out_ << line << "\n";
}

void LiveView::RecordFill(const DataLoaderMetricsProto& metrics) {
  for (const StageMetricProto& stage : metrics.stage_metrics()) {
    for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
      if (queue.capacity() == 0) continue;
      fill_sum_[stage.name() + "." + queue.name()] +=
          static_cast<double>(queue.size()) / queue.capacity();
    }
  }
  ++fill_samples_;
}

void LiveView::PrintSummary(const DataLoaderMetricsProto& metrics) {
  const Throughput rate = ComputeThroughput(config_, metrics, true);
  out_ << absl::StrFormat(
      "\nsummary: %.1fs, %s batches/s, %s positions/s on average (io: %s)\n",
      metrics.elapsed_seconds(), Rate(rate.batches_per_second),
      Rate(rate.positions_per_second), metrics.io_backend());
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    std::string skips;
    for (const SkipCountProto& skip : stage.skipped()) {
      skips += absl::StrFormat(" %s=%d", skip.reason(), skip.count());
    }
    out_ << absl::StrFormat("  %-18s load %.2f%s%s\n", stage.name(),
                            stage.load().load(),
                            skips.empty() ? "" : ", skipped:", skips);
  }
  ChannelFill fill;
  for (const auto& [channel, sum] : fill_sum_) {
    fill[channel] = sum / std::max(fill_samples_, 1);
  }
  const std::string bottleneck = FindBottleneck(config_, metrics, fill);
  if (!bottleneck.empty()) out_ << "bottleneck: " << bottleneck << "\n";
  if (!metrics.error().empty()) out_ << "error: " << metrics.error() << "\n";
  out_.flush();
}

}  // namespace sluice::cli
