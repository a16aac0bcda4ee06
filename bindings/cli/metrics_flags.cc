#include "bindings/cli/metrics_flags.h"

#include "absl/strings/str_replace.h"

namespace sluice::cli {

std::vector<std::string> WithMetricsFlags(std::vector<std::string> flags) {
  flags.push_back("metrics-port");
  flags.push_back("metrics-address");
  return flags;
}

void MetricsFlags::ApplyTo(DataLoaderConfig* config) const {
  if (port != 0) config->set_metrics_port(port);
  if (address.has_value()) config->set_metrics_address(*address);
}

absl::StatusOr<MetricsFlags> ParseMetricsFlags(const ParsedArgs& args) {
  absl::StatusOr<int64_t> port = IntFlag(args, "metrics-port", 0, 1, 65535);
  if (!port.ok()) return port.status();
  MetricsFlags flags{.port = static_cast<uint32_t>(*port)};
  if (auto address = args.flags.find("metrics-address");
      address != args.flags.end()) {
    flags.address = address->second;
  }
  return flags;
}

std::string NameMetricsFlags(absl::string_view message) {
  return absl::StrReplaceAll(
      message,
      {{"DataLoaderConfig: field 'metrics_port'", "--metrics-port"},
       {"DataLoaderConfig: field 'metrics_address'", "--metrics-address"}});
}

}  // namespace sluice::cli
