#include "bindings/report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sluice::report {
namespace {

// The drawing, in SVG user units (it scales to the page's width).
constexpr double kWidth = 760;
constexpr double kHeight = 230;
constexpr double kLeft = 62;
constexpr double kRight = 14;
constexpr double kTop = 10;
constexpr double kBottom = 32;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kPlotHeight = kHeight - kTop - kBottom;
// Points are marked with dots up to this many per series.
constexpr size_t kMaxDottedPoints = 40;

// Tableau 10: tells up to ten lines apart; more repeat with a dash.
constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                   "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                   "#9c755f", "#bab0ac"};
constexpr size_t kColorCount = sizeof(kColors) / sizeof(kColors[0]);

// A round step (1, 2, 2.5 or 5 times a power of ten) that cuts `span` into
// about `parts` parts.
double NiceStep(double span, int parts) {
  if (!(span > 0)) return 1;
  const double raw = span / parts;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10 * power;
}

std::string Coordinate(double value) { return absl::StrFormat("%.1f", value); }

std::string FormatSeconds(double seconds) {
  if (seconds >= 120 && std::fmod(seconds, 60) == 0) {
    return absl::StrFormat("%g min", seconds / 60);
  }
  return absl::StrFormat("%g s", seconds);
}

}  // namespace

std::string EscapeHtml(absl::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

std::string FormatValue(double value, absl::string_view unit) {
  if (!std::isfinite(value)) return "n/a";
  if (unit == "%") return absl::StrFormat("%.0f%%", value * 100);
  const double magnitude = std::fabs(value);
  std::string number;
  if (magnitude >= 1e9) {
    number = absl::StrFormat("%.2fG", value / 1e9);
  } else if (magnitude >= 1e6) {
    number = absl::StrFormat("%.2fM", value / 1e6);
  } else if (magnitude >= 1e4) {
    number = absl::StrFormat("%.1fk", value / 1e3);
  } else if (magnitude >= 100 || value == std::floor(value)) {
    number = absl::StrFormat("%.0f", value);
  } else if (magnitude >= 10) {
    number = absl::StrFormat("%.1f", value);
  } else {
    number = absl::StrFormat("%.2f", value);
  }
  if (unit.empty()) return number;
  return absl::StrCat(number, unit.front() == '/' ? "" : " ", unit);
}

std::string RenderLineChart(const LineChart& chart) {
  const size_t points = chart.seconds.size();
  const double x_end =
      points > 0 && chart.seconds.back() > 0 ? chart.seconds.back() : 1;
  double largest = 0;
  for (const LineChart::Series& series : chart.series) {
    for (const double value : series.values) {
      if (std::isfinite(value)) largest = std::max(largest, value);
    }
  }
  const double y_step_auto = NiceStep(largest > 0 ? largest : 1, 4);
  double y_end = chart.y_max.has_value() && *chart.y_max > 0
                     ? *chart.y_max
                     : std::max(y_step_auto,
                                std::ceil(largest / y_step_auto) * y_step_auto);
  if (!(y_end > 0) || !std::isfinite(y_end)) y_end = 1;
  const double y_step = NiceStep(y_end, 4);
  const auto x_of = [&](double seconds) {
    return kLeft + kPlotWidth * std::clamp(seconds / x_end, 0.0, 1.0);
  };
  const auto y_of = [&](double value) {
    return kTop + kPlotHeight * (1 - std::clamp(value / y_end, 0.0, 1.0));
  };

  std::string svg = absl::StrFormat(
      "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
      "aria-label=\"%s\">\n",
      kWidth, kHeight, EscapeHtml(chart.title));
  // Grid and axes.
  for (double y = 0; y <= y_end * (1 + 1e-9); y += y_step) {
    absl::StrAppend(&svg, "<line class=\"grid\" x1=\"", Coordinate(kLeft),
                    "\" x2=\"", Coordinate(kLeft + kPlotWidth), "\" y1=\"",
                    Coordinate(y_of(y)), "\" y2=\"", Coordinate(y_of(y)),
                    "\"/><text class=\"tick\" x=\"", Coordinate(kLeft - 6),
                    "\" y=\"", Coordinate(y_of(y) + 4),
                    "\" text-anchor=\"end\">",
                    EscapeHtml(FormatValue(y, chart.unit)), "</text>\n");
  }
  const double x_step = NiceStep(x_end, 6);
  for (double x = 0; x <= x_end * (1 + 1e-9); x += x_step) {
    absl::StrAppend(
        &svg, "<line class=\"axis\" x1=\"", Coordinate(x_of(x)), "\" x2=\"",
        Coordinate(x_of(x)), "\" y1=\"", Coordinate(kTop + kPlotHeight),
        "\" y2=\"", Coordinate(kTop + kPlotHeight + 4),
        "\"/><text class=\"tick\" x=\"", Coordinate(x_of(x)), "\" y=\"",
        Coordinate(kTop + kPlotHeight + 18), "\" text-anchor=\"middle\">",
        EscapeHtml(FormatSeconds(x)), "</text>\n");
  }
  absl::StrAppend(&svg, "<rect class=\"frame\" x=\"", Coordinate(kLeft),
                  "\" y=\"", Coordinate(kTop), "\" width=\"",
                  Coordinate(kPlotWidth), "\" height=\"",
                  Coordinate(kPlotHeight), "\"/>\n");
  // One polyline per run of finite values.
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const LineChart::Series& series = chart.series[s];
    const std::string color = kColors[s % kColorCount];
    const std::string dash =
        s >= kColorCount ? " stroke-dasharray=\"6 3\"" : "";
    std::string line;
    std::string dots;
    const auto flush = [&] {
      if (line.empty()) return;
      absl::StrAppend(&svg, "<polyline class=\"line\" stroke=\"", color, "\"",
                      dash, " points=\"", line, "\"/>\n");
      line.clear();
    };
    for (size_t i = 0; i < points && i < series.values.size(); ++i) {
      const double value = series.values[i];
      if (!std::isfinite(value) || !std::isfinite(chart.seconds[i])) {
        flush();
        continue;
      }
      const std::string x = Coordinate(x_of(chart.seconds[i]));
      const std::string y = Coordinate(y_of(value));
      absl::StrAppend(&line, line.empty() ? "" : " ", x, ",", y);
      if (points <= kMaxDottedPoints) {
        absl::StrAppend(&dots, "<circle cx=\"", x, "\" cy=\"", y,
                        "\" r=\"2.5\" fill=\"", color, "\"/>");
      }
    }
    flush();
    svg += dots;
  }
  // A band per point that shows every series' value there on hover.
  for (size_t i = 0; i < points; ++i) {
    const double left =
        i == 0 ? kLeft
               : (x_of(chart.seconds[i - 1]) + x_of(chart.seconds[i])) / 2;
    const double right =
        i + 1 == points
            ? kLeft + kPlotWidth
            : (x_of(chart.seconds[i]) + x_of(chart.seconds[i + 1])) / 2;
    if (!(right > left)) continue;
    std::string tip = absl::StrFormat("%.1f s", chart.seconds[i]);
    for (const LineChart::Series& series : chart.series) {
      const double value =
          i < series.values.size() ? series.values[i] : std::nan("");
      absl::StrAppend(&tip, "\n", series.name, ": ",
                      FormatValue(value, chart.unit));
    }
    absl::StrAppend(&svg, "<rect class=\"band\" x=\"", Coordinate(left),
                    "\" y=\"", Coordinate(kTop), "\" width=\"",
                    Coordinate(right - left), "\" height=\"",
                    Coordinate(kPlotHeight), "\"><title>", EscapeHtml(tip),
                    "</title></rect>\n");
  }
  svg += "</svg>\n";

  std::string legend = "<div class=\"legend\">";
  for (size_t s = 0; s < chart.series.size(); ++s) {
    absl::StrAppend(&legend, "<span class=\"key\"><i style=\"background:",
                    kColors[s % kColorCount], "\"></i>",
                    EscapeHtml(chart.series[s].name), "</span>");
  }
  legend += "</div>\n";
  return absl::StrCat("<figure>\n<figcaption>", EscapeHtml(chart.title),
                      "</figcaption>\n", svg, legend, "</figure>\n");
}

}  // namespace sluice::report
