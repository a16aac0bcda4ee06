#include "bindings/cli/live_view.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"

namespace sluice::cli {
namespace {

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

// "games 12 probed 340 ..." for a rescorer stage, else "".
std::string RescorerCounts(const StageMetricProto& stage) {
  if (!stage.has_chunk_rescorer()) return "";
  const ChunkRescorerMetricsProto& r = stage.chunk_rescorer();
  return absl::StrFormat(
      "games %d, positions %d, probed %d, results changed %d, DTZ decisions "
      "%d, blunders %d, boosted entries %d",
      r.games(), r.positions(), r.positions_probed(), r.results_changed(),
      r.dtz_decisions(), r.blunders(), r.boosted_entries());
}

std::string Rate(double per_second) {
  if (per_second >= 1e6) return absl::StrFormat("%.2fM", per_second / 1e6);
  if (per_second >= 1e4) return absl::StrFormat("%.1fk", per_second / 1e3);
  return absl::StrFormat("%.0f", per_second);
}

}  // namespace

std::string ClipToColumns(const std::string& line, int columns) {
  if (columns <= 0) return line;
  std::string clipped;
  int width = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b') {
      // CSI: ESC [ parameters final byte (0x40-0x7e).
      size_t end = i + 1;
      if (end < line.size() && line[end] == '[') {
        ++end;
        while (end < line.size() && (line[end] < 0x40 || line[end] > 0x7e)) {
          ++end;
        }
      }
      clipped.append(line, i, end + 1 - i);
      i = end;
      continue;
    }
    // UTF-8 continuation bytes take no column of their own.
    const bool continuation =
        (static_cast<unsigned char>(line[i]) & 0xc0) == 0x80;
    if (!continuation && width == columns) continue;
    if (!continuation) ++width;
    clipped += line[i];
  }
  return clipped;
}

LiveView::LiveView(const DataLoaderConfig& config, std::ostream& out,
                   bool interactive, int columns)
    : config_(config),
      out_(out),
      interactive_(interactive),
      columns_(columns) {}

void LiveView::Render(const DataLoaderMetricsProto& metrics) {
  if (static_cast<int64_t>(metrics.snapshot_index()) == last_snapshot_) return;
  last_snapshot_ = static_cast<int64_t>(metrics.snapshot_index());
  if (interactive_) {
    RenderTable(metrics);
  } else {
    RenderLine(metrics);
  }
  out_.flush();
}

void LiveView::RenderTable(const DataLoaderMetricsProto& metrics) {
  // The type column only where it fits without cutting the counts.
  const bool show_type = columns_ == 0 || columns_ > 104;
  const report::Throughput rate =
      report::ComputeThroughput(config_, metrics, false);
  std::vector<std::string> lines;
  lines.push_back(absl::StrFormat(
      "\x1b[1msluice\x1b[0m  %.1fs elapsed  %s batches/s  %s %s/s  io: %s",
      metrics.elapsed_seconds(), Rate(rate.batches_per_second),
      Rate(rate.examples_per_second), rate.unit, metrics.io_backend()));
  if (const std::string budget = report::MemoryBudgetLine(metrics);
      !budget.empty()) {
    lines.push_back(budget);
  }
  if (const std::string autotune = report::AutotuneLine(metrics);
      !autotune.empty()) {
    lines.push_back(autotune);
  }
  lines.push_back(
      absl::StrFormat("%-18s %s%-17s %10s %13s %6s %7s", "stage",
                      show_type ? absl::StrFormat("%-24s ", "type") : "",
                      "load", "items/s", "output fill", "drops", "errors"));
  for (const StageMetricProto& stage : metrics.stage_metrics()) {
    const double seconds = std::max(metrics.interval_seconds(), 1e-9);
    uint64_t put = 0, drops = 0, size = 0, capacity = 0;
    for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
      put += queue.put_count();
      drops += queue.drop_count();
      size += queue.size();
      capacity += queue.capacity();
    }
    lines.push_back(absl::StrFormat(
        "%-18s %s[%s] %4.2f %10s %6d/%-6d %6d %7d", stage.name(),
        show_type ? absl::StrFormat("%-24s ", stage.type()) : "",
        LoadBar(stage.load().load()), stage.load().load(), Rate(put / seconds),
        size, capacity, drops, SkippedTotal(stage)));
    // A rescorer's counts since start, under its row.
    if (const StageMetricProto* total =
            report::FindStage(metrics.total_stage_metrics(), stage.name());
        total != nullptr && total->has_chunk_rescorer()) {
      lines.push_back("  " + RescorerCounts(*total));
    }
  }
  // Back to the first line of the previous block, redraw every line (cut
  // short of the last column, so the cursor never wraps), erase the rest.
  std::string frame;
  if (lines_drawn_ > 0) frame = absl::StrFormat("\x1b[%dF", lines_drawn_);
  for (const std::string& line : lines) {
    frame += ClipToColumns(line, columns_ > 1 ? columns_ - 1 : 0);
    frame += "\x1b[K\n";
  }
  frame += "\x1b[J";
  out_ << frame;
  lines_drawn_ = static_cast<int>(lines.size());
}

void LiveView::RenderLine(const DataLoaderMetricsProto& metrics) {
  const report::Throughput rate =
      report::ComputeThroughput(config_, metrics, false);
  std::string line = absl::StrFormat(
      "[%7.1fs] %s batches/s, %s %s/s |", metrics.elapsed_seconds(),
      Rate(rate.batches_per_second), Rate(rate.examples_per_second), rate.unit);
  for (const StageMetricProto& stage : metrics.stage_metrics()) {
    line += absl::StrFormat(" %s load %.2f", stage.name(), stage.load().load());
    for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
      line += absl::StrFormat(" fill %d/%d", queue.size(), queue.capacity());
    }
    line += ";";
  }
  out_ << line << "\n";
}

void LiveView::PrintSummary(const DataLoaderMetricsProto& metrics,
                            const report::ChannelFill& fill) {
  const report::Throughput rate =
      report::ComputeThroughput(config_, metrics, true);
  out_ << absl::StrFormat(
      "\nsummary: %.1fs, %s batches/s, %s %s/s on average (io: %s)\n",
      metrics.elapsed_seconds(), Rate(rate.batches_per_second),
      Rate(rate.examples_per_second), rate.unit, metrics.io_backend());
  if (const std::string budget = report::MemoryBudgetLine(metrics);
      !budget.empty()) {
    out_ << "  " << budget << "\n";
  }
  if (const std::string autotune = report::AutotuneLine(metrics);
      !autotune.empty()) {
    out_ << "  " << autotune << "\n";
  }
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    std::string skips;
    for (const SkipCountProto& skip : stage.skipped()) {
      skips += absl::StrFormat(" %s=%d", skip.reason(), skip.count());
    }
    // `load` is the last interval's (a gauge); the run's is busy/capacity.
    const LoadMetricProto& load = stage.load();
    const double run_load = load.capacity_seconds() > 0
                                ? load.busy_seconds() / load.capacity_seconds()
                                : 0;
    out_ << absl::StrFormat("  %-18s load %.2f (busy %.1fs)%s%s\n",
                            stage.name(), run_load, load.busy_seconds(),
                            skips.empty() ? "" : ", skipped:", skips);
    if (stage.has_chunk_rescorer()) {
      out_ << "    " << RescorerCounts(stage) << "\n";
    }
  }
  const report::Bottleneck bottleneck =
      report::FindBottleneck(config_, metrics, fill);
  out_ << "bottleneck: "
       << (bottleneck.stage.empty() ? bottleneck.why_none : bottleneck.stage)
       << "\n";
  if (!metrics.error().empty()) out_ << "error: " << metrics.error() << "\n";
  out_.flush();
}

}  // namespace sluice::cli
