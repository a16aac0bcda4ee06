#include "engine/prometheus_text.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

// HELP text escapes backslash and line feed; label values also the double
// quote.
void AppendEscaped(std::string_view text, bool quote, std::string* out) {
  for (const char c : text) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (quote && c == '"') {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

std::string FormatPrometheusValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  const std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

void PrometheusText::Add(std::string_view name, Type type,
                         std::string_view help, const Labels& labels,
                         double value) {
  auto found = index_.find(name);
  if (found == index_.end()) {
    found = index_.emplace(std::string(name), families_.size()).first;
    families_.push_back(
        {.name = std::string(name), .type = type, .help = std::string(help)});
  }
  std::string& line = families_[found->second].samples;
  line.append(name);
  if (!labels.empty()) {
    line.push_back('{');
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) line.push_back(',');
      line.append(labels[i].first);
      line.append("=\"");
      AppendEscaped(labels[i].second, /*quote=*/true, &line);
      line.push_back('"');
    }
    line.push_back('}');
  }
  line.push_back(' ');
  line.append(FormatPrometheusValue(value));
  line.push_back('\n');
}

std::string PrometheusText::Render() const {
  std::string page;
  for (const Family& family : families_) {
    absl::StrAppend(&page, "# HELP ", family.name, " ");
    AppendEscaped(family.help, /*quote=*/false, &page);
    absl::StrAppend(&page, "\n# TYPE ", family.name, " ",
                    family.type == kCounter ? "counter" : "gauge", "\n",
                    family.samples);
  }
  return page;
}

}  // namespace sluice
