// PrometheusText: a page in the Prometheus text exposition format (0.0.4):
// metric families with their HELP and TYPE lines, each family's samples
// together, label values escaped, numbers written so they read back
// exactly.
//
//   PrometheusText page;
//   page.Add("sluice_stage_items_out_total", PrometheusText::kCounter,
//            "Items the stage sent.", {{"stage", "decoder"}}, 1234);
//   std::string body = page.Render();
//
// Names must match [a-zA-Z_:][a-zA-Z0-9_:]* (the caller's promise); label
// values may hold any UTF-8.
#ifndef SLUICE_ENGINE_PROMETHEUS_TEXT_H_
#define SLUICE_ENGINE_PROMETHEUS_TEXT_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class PrometheusText {
 public:
  enum Type { kCounter, kGauge };
  using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

  // The Content-Type of a rendered page.
  static constexpr std::string_view kContentType =
      "text/plain; version=0.0.4; charset=utf-8";

  // Adds one sample to family `name`. The first sample of a family sets
  // its type and help text; later ones only add samples.
  void Add(std::string_view name, Type type, std::string_view help,
           const Labels& labels, double value);

  // The page: families in the order of their first sample.
  std::string Render() const;

 private:
  struct Family {
    std::string name;
    Type type;
    std::string help;
    std::string samples;  // rendered sample lines
  };
  std::vector<Family> families_;
  std::map<std::string, size_t, std::less<>> index_;
};

// `value` as the exposition format writes it: the shortest text that reads
// back as the same double; NaN, +Inf, -Inf.
std::string FormatPrometheusValue(double value);

}  // namespace sluice

#endif  // SLUICE_ENGINE_PROMETHEUS_TEXT_H_
