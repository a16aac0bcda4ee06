#include "bindings/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bindings/report/run_analysis.h"
#include "bindings/report/svg_chart.h"
#include "google/protobuf/text_format.h"
#include "io/atomic_file.h"

namespace sluice::report {
namespace {

constexpr char kStyle[] = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1f2328; margin: 0 auto; max-width: 1000px; padding: 16px 24px; }
h1 { font-size: 22px; margin: 8px 0 2px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #d8dee4;
     padding-bottom: 4px; }
.sub { color: #59636e; margin: 0 0 12px; }
.tiles { display: flex; flex-wrap: wrap; gap: 10px; }
.tile { border: 1px solid #d8dee4; border-radius: 6px; padding: 8px 12px;
        min-width: 150px; flex: 1; }
.tile b { display: block; font-size: 19px; }
.tile span { color: #59636e; font-size: 12px; }
.error { background: #ffebe9; border: 1px solid #ff8182; border-radius: 6px;
         padding: 8px 12px; margin-top: 12px; }
.verdict { background: #f6f8fa; border-left: 4px solid #e15759;
           padding: 8px 12px; }
figure { margin: 10px 0 18px; }
figcaption { font-weight: 600; margin-bottom: 2px; }
svg.chart { width: 100%; height: auto; display: block; }
svg .grid { stroke: #e8eaed; stroke-width: 1; }
svg .axis { stroke: #8c959f; stroke-width: 1; }
svg .frame { fill: none; stroke: #d0d7de; stroke-width: 1; }
svg .tick { font-size: 11px; fill: #59636e; }
svg .line { fill: none; stroke-width: 1.8; stroke-linejoin: round; }
svg .band { fill: #0969da; fill-opacity: 0; }
svg .band:hover { fill-opacity: 0.08; }
.legend { font-size: 12px; color: #424a53; }
.key { margin-right: 14px; white-space: nowrap; }
.key i { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
         margin-right: 5px; vertical-align: -1px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eaeef2;
         vertical-align: top; }
th { color: #59636e; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.limit td { background: #fff1f0; }
.bar { display: inline-block; height: 8px; background: #4e79a7;
       border-radius: 2px; vertical-align: 0; margin-right: 6px; }
pre { background: #f6f8fa; border-radius: 6px; padding: 10px 12px;
      overflow-x: auto; font-size: 12px; }
footer { color: #59636e; font-size: 12px; margin: 28px 0 8px; }
)css";

std::string Tile(absl::string_view value, absl::string_view label) {
  return absl::StrCat("<div class=\"tile\"><b>", EscapeHtml(value),
                      "</b><span>", EscapeHtml(label), "</span></div>\n");
}

// The sample times of `history`.
std::vector<double> Seconds(
    const std::vector<MetricsHistory::Sample>& history) {
  std::vector<double> seconds;
  for (const MetricsHistory::Sample& sample : history) {
    seconds.push_back(sample.end_seconds);
  }
  return seconds;
}

// Series keyed by name, in first-seen order.
class SeriesSet {
 public:
  explicit SeriesSet(size_t points) : points_(points) {}
  // Sets the value of series `name` at point `i` (other points: NaN).
  void Set(const std::string& name, size_t i, double value) {
    auto [it, added] = index_.try_emplace(name, series_.size());
    if (added) {
      series_.push_back({name, std::vector<double>(points_, std::nan(""))});
    }
    series_[it->second].values[i] = value;
  }
  std::vector<LineChart::Series> Take() { return std::move(series_); }
  bool empty() const { return series_.empty(); }

 private:
  size_t points_;
  std::map<std::string, size_t> index_;
  std::vector<LineChart::Series> series_;
};

std::string ThroughputChart(const RunReportInputs& inputs) {
  const auto& history = inputs.history;
  LineChart chart{.seconds = Seconds(history)};
  LineChart::Series examples, batches;
  std::string unit = "examples";
  for (const MetricsHistory::Sample& sample : history) {
    const Throughput rate =
        ComputeThroughput(inputs.config, sample.metrics, /*totals=*/false);
    unit = rate.unit;
    examples.values.push_back(rate.examples_per_second);
    batches.values.push_back(rate.batches_per_second);
  }
  const bool has_examples =
      std::any_of(examples.values.begin(), examples.values.end(),
                  [](double value) { return value > 0; });
  if (has_examples) {
    chart.title = absl::StrCat("Throughput: ", unit, " per second");
    examples.name = absl::StrCat(unit, "/s");
    chart.unit = "/s";
    chart.series.push_back(std::move(examples));
    LineChart batch_chart{
        .title = "Batches per second", .unit = "/s", .seconds = chart.seconds};
    batches.name = "batches/s";
    batch_chart.series.push_back(std::move(batches));
    return RenderLineChart(chart) + RenderLineChart(batch_chart);
  }
  chart.title = "Throughput: batches per second";
  chart.unit = "/s";
  batches.name = "batches/s";
  chart.series.push_back(std::move(batches));
  return RenderLineChart(chart);
}

// A chart of shares in [0, 1] over the samples of `history`, drawn as
// percentages on an axis that ends at 100%.
std::string ShareChart(std::string title,
                       const std::vector<MetricsHistory::Sample>& history,
                       std::vector<LineChart::Series> series) {
  return RenderLineChart(LineChart{.title = std::move(title),
                                   .unit = "%",
                                   .seconds = Seconds(history),
                                   .series = std::move(series),
                                   .y_max = 1.0});
}

std::string StageCharts(const RunReportInputs& inputs) {
  const auto& history = inputs.history;
  SeriesSet load(history.size()), fill(history.size());
  for (size_t i = 0; i < history.size(); ++i) {
    for (const StageMetricProto& stage : history[i].metrics.stage_metrics()) {
      load.Set(stage.name(), i, stage.load().load());
      for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
        if (queue.capacity() == 0) continue;
        fill.Set(absl::StrCat(stage.name(), ".", queue.name()), i,
                 static_cast<double>(queue.size()) / queue.capacity());
      }
    }
  }
  return ShareChart("Stage load: busy share of each stage's coroutine time",
                    history, load.Take()) +
         ShareChart(
             "Channel fill: items buffered / capacity (at each sample's end)",
             history, fill.Take());
}

std::string SkipChart(const RunReportInputs& inputs) {
  const auto& history = inputs.history;
  SeriesSet skipped(history.size());
  std::map<std::string, double> running;
  for (size_t i = 0; i < history.size(); ++i) {
    for (const StageMetricProto& stage : history[i].metrics.stage_metrics()) {
      for (const SkipCountProto& skip : stage.skipped()) {
        running[absl::StrCat(stage.name(), ": ", skip.reason())] +=
            static_cast<double>(skip.count());
      }
    }
    for (const auto& [name, count] : running) skipped.Set(name, i, count);
  }
  if (skipped.empty()) {
    return "<p>No item was skipped: every input the stages received was "
           "good.</p>\n";
  }
  LineChart chart{.title = "Items skipped since the start, by stage and reason",
                  .seconds = Seconds(history),
                  .series = skipped.Take()};
  return RenderLineChart(chart);
}

std::string MemoryChart(const RunReportInputs& inputs) {
  LineChart chart{.title = "Resident set size (the largest in each sample)",
                  .unit = "MB",
                  .seconds = Seconds(inputs.history)};
  LineChart::Series rss{.name = "RSS"};
  for (const MetricsHistory::Sample& sample : inputs.history) {
    rss.values.push_back(static_cast<double>(sample.rss_bytes) / 1e6);
  }
  chart.series.push_back(std::move(rss));
  return RenderLineChart(chart);
}

std::string BottleneckSection(const RunReportInputs& inputs,
                              const ChannelFill& fill,
                              const Bottleneck& bottleneck) {
  std::string html;
  const std::vector<StageEvidence> evidence =
      GatherEvidence(inputs.config, inputs.metrics, fill);
  if (!bottleneck.stage.empty()) {
    double load = 0;
    for (const StageEvidence& stage : evidence) {
      if (stage.stage == bottleneck.stage) load = stage.run_load;
    }
    absl::StrAppend(
        &html, "<p class=\"verdict\"><b>", EscapeHtml(bottleneck.stage),
        "</b> limits this run: its coroutines were busy ",
        FormatValue(load, "%"),
        " of their time, the most of the stages that were busy at least ",
        absl::StrFormat("%.1f", kMinBottleneckBusySeconds),
        " s and whose inputs were at least a quarter full on average (work "
        "waited for them). A faster or more parallel ",
        EscapeHtml(bottleneck.stage), " would speed the pipeline up.</p>\n");
  } else {
    absl::StrAppend(&html, "<p class=\"verdict\">No bottleneck is named: ",
                    EscapeHtml(bottleneck.why_none), ".</p>\n");
  }
  html +=
      "<table><tr><th>stage</th><th>type</th><th>load over the run</th>"
      "<th class=\"num\">busy</th><th class=\"num\">input fill "
      "(average)</th><th>verdict</th></tr>\n";
  for (const StageEvidence& stage : evidence) {
    std::string verdict;
    if (stage.stage == bottleneck.stage) {
      verdict = "bottleneck: the highest load of the candidates";
    } else if (!stage.busy_enough) {
      verdict = absl::StrFormat("not a candidate: busy under %.1f s",
                                kMinBottleneckBusySeconds);
    } else if (stage.starved) {
      verdict = "starved: waited for its input (under 25% full)";
    } else {
      verdict = "candidate with a lower load";
    }
    const int bar = static_cast<int>(std::lround(stage.run_load * 100));
    absl::StrAppend(
        &html, "<tr", stage.stage == bottleneck.stage ? " class=\"limit\"" : "",
        "><td>", EscapeHtml(stage.stage), "</td><td>", EscapeHtml(stage.type),
        "</td><td><span class=\"bar\" style=\"width:", std::clamp(bar, 0, 100),
        "px\"></span>", FormatValue(stage.run_load, "%"),
        "</td><td class=\"num\">",
        absl::StrFormat("%.2f s", stage.busy_seconds),
        "</td><td class=\"num\">",
        stage.input_fill.has_value() ? FormatValue(*stage.input_fill, "%")
                                     : "no input",
        "</td><td>", EscapeHtml(verdict), "</td></tr>\n");
  }
  html += "</table>\n";
  return html;
}

std::string TotalsTable(const RunReportInputs& inputs) {
  // The coroutines each stage ran at most at once (the totals hold those
  // still running at the end: none once a run stopped).
  std::map<std::string, uint32_t> most_workers;
  for (const MetricsHistory::Sample& sample : inputs.history) {
    for (const StageMetricProto& stage : sample.metrics.stage_metrics()) {
      uint32_t& most = most_workers[stage.name()];
      most = std::max(most, stage.load().workers());
    }
  }
  std::string html =
      "<table><tr><th>stage</th><th class=\"num\">coroutines (most at "
      "once)</th>"
      "<th class=\"num\">items out</th><th class=\"num\">dropped by a "
      "channel</th><th>skipped, by reason</th></tr>\n";
  for (const StageMetricProto& stage : inputs.metrics.total_stage_metrics()) {
    uint64_t out = 0, dropped = 0;
    for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
      out += queue.put_count();
      dropped += queue.drop_count();
    }
    std::vector<std::string> skips;
    for (const SkipCountProto& skip : stage.skipped()) {
      skips.push_back(absl::StrCat(skip.reason(), ": ", skip.count()));
    }
    absl::StrAppend(
        &html, "<tr><td>", EscapeHtml(stage.name()), "</td><td class=\"num\">",
        most_workers[stage.name()], "</td><td class=\"num\">", out,
        "</td><td class=\"num\">", dropped, "</td><td>",
        EscapeHtml(skips.empty() ? "none" : absl::StrJoin(skips, ", ")),
        "</td></tr>\n");
  }
  html += "</table>\n";
  return html;
}

}  // namespace

std::string RenderRunReport(const RunReportInputs& inputs) {
  const DataLoaderMetricsProto& metrics = inputs.metrics;
  const ChannelFill fill = AverageChannelFill(inputs.history);
  const Bottleneck bottleneck = FindBottleneck(inputs.config, metrics, fill);
  const Throughput rate =
      ComputeThroughput(inputs.config, metrics, /*totals=*/true);
  uint64_t peak_rss = 0;
  for (const MetricsHistory::Sample& sample : inputs.history) {
    peak_rss = std::max(peak_rss, sample.rss_bytes);
  }

  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\">\n<title>sluice run report: ",
      EscapeHtml(inputs.title), "</title>\n<style>", kStyle,
      "</style>\n</head>\n<body>\n<header>\n<h1>sluice run report</h1>\n"
      "<p class=\"sub\">",
      EscapeHtml(inputs.title), " &middot; ",
      EscapeHtml(absl::FormatTime("%Y-%m-%d %H:%M:%S %Z", absl::Now(),
                                  absl::LocalTimeZone())),
      " &middot; ",
      EscapeHtml(absl::StrFormat("%.1f s", metrics.elapsed_seconds())),
      " &middot; reads: ", EscapeHtml(metrics.io_backend()), " &middot; ",
      inputs.config.worker_threads() == 0
          ? std::string("one worker thread per core")
          : absl::StrCat(inputs.config.worker_threads(), " worker threads"),
      "</p>\n</header>\n<section class=\"tiles\">\n");
  absl::StrAppend(
      &html,
      Tile(FormatValue(rate.examples_per_second, "/s"),
           absl::StrCat(rate.unit, " per second on average")),
      Tile(FormatValue(rate.batches_per_second, "/s"),
           absl::StrCat("batches per second (", rate.batches, " batches)")),
      Tile(peak_rss > 0 ? FormatValue(peak_rss / 1e6, "MB") : "n/a",
           "peak resident set size"),
      Tile(bottleneck.stage.empty() ? "none named" : bottleneck.stage,
           "bottleneck"),
      "</section>\n");
  if (!metrics.error().empty()) {
    absl::StrAppend(&html, "<p class=\"error\"><b>The pipeline failed:</b> ",
                    EscapeHtml(metrics.error()), "</p>\n");
  }
  if (inputs.history.empty()) {
    html += "<p>No metrics snapshot was taken: the run ended at once.</p>\n";
  }
  absl::StrAppend(
      &html, "<h2>Throughput</h2>\n", ThroughputChart(inputs),
      "<h2>Bottleneck</h2>\n", BottleneckSection(inputs, fill, bottleneck),
      "<h2>Stages and channels over time</h2>\n", StageCharts(inputs),
      "<h2>Skipped items</h2>\n", SkipChart(inputs), "<h2>Memory</h2>\n",
      metrics.has_memory_budget()
          ? absl::StrCat("<p>", EscapeHtml(MemoryBudgetLine(metrics)), "</p>\n")
          : "",
      MemoryChart(inputs),
      metrics.has_autotune()
          ? absl::StrCat("<h2>Autotune</h2>\n<p>",
                         EscapeHtml(AutotuneLine(metrics)), "</p>\n")
          : "",
      "<h2>Totals by stage</h2>\n", TotalsTable(inputs));
  std::string config_text;
  google::protobuf::TextFormat::PrintToString(inputs.config, &config_text);
  const size_t snapshots =
      inputs.history.empty()
          ? 0
          : static_cast<size_t>(std::llround(
                inputs.history.front().span_seconds /
                std::max(inputs.config.metrics_interval_seconds(), 1e-9)));
  absl::StrAppend(
      &html, "<h2>Config</h2>\n<pre>", EscapeHtml(config_text), "</pre>\n",
      "<footer>Each point of a chart is one sample of the run's metrics: ",
      inputs.history.size(), " samples of about ",
      std::max<size_t>(snapshots, 1), " metrics interval(s) of ",
      absl::StrFormat("%g", inputs.config.metrics_interval_seconds()),
      " s (a long run's samples are merged in pairs to keep the page "
      "small). Hover over a chart to read its values. Load: busy "
      "coroutine-seconds over alive coroutine-seconds; a stage waiting on "
      "a channel or a read is not busy.</footer>\n</body>\n</html>\n");
  return html;
}

absl::Status WriteRunReport(const RunReportInputs& inputs,
                            const std::string& path) {
  absl::StatusOr<AtomicFileWriter> file = AtomicFileWriter::CreateForPath(path);
  absl::Status status = file.status();
  if (status.ok()) status = file->Append(RenderRunReport(inputs));
  if (status.ok()) status = file->Commit();
  if (status.ok()) return status;
  return absl::Status(
      status.code(),
      absl::StrCat("cannot write the report '", path, "': ", status.message()));
}

}  // namespace sluice::report
