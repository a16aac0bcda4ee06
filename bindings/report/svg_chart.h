// A line chart over time as inline SVG, for the HTML run report: axes with
// round ticks, one line per series, a legend, and a tooltip per moment
// (hover anywhere over the chart: the time and every series' value there,
// from the SVG's own <title>, with no script).
//
//   LineChart chart{.title = "Stage load", .unit = ""};
//   chart.seconds = {0.5, 1.0, 1.5};
//   chart.series.push_back({"decoder", {0.2, 0.9, 0.95}});
//   html += RenderLineChart(chart);
//
// Promises: the markup is self-contained (no script, no external
// resource) and every number in it is finite: values that are not (NaN,
// infinities) leave a gap in their line.
#ifndef SLUICE_BINDINGS_REPORT_SVG_CHART_H_
#define SLUICE_BINDINGS_REPORT_SVG_CHART_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace sluice::report {

struct LineChart {
  struct Series {
    std::string name;
    // One value per entry of `seconds`.
    std::vector<double> values;
  };
  std::string title;
  // Shown after values on the y axis and in tooltips ("MB", "/s"; "%"
  // shows values in [0, 1] as percentages).
  std::string unit;
  // The time of each point, seconds since the run started (ascending).
  std::vector<double> seconds;
  std::vector<Series> series;
  // The y axis's top; unset: a round number above the largest value.
  std::optional<double> y_max;
};

// The chart as a <figure> holding its title, its <svg> and its legend.
std::string RenderLineChart(const LineChart& chart);

// `value` with a unit: 0.42 as "42%" for unit "%", large values shortened
// (12.3k, 4.56M), else up to three significant digits.
std::string FormatValue(double value, absl::string_view unit);

// `text` with &, <, >, " and ' escaped for HTML text and attributes.
std::string EscapeHtml(absl::string_view text);

}  // namespace sluice::report

#endif  // SLUICE_BINDINGS_REPORT_SVG_CHART_H_
