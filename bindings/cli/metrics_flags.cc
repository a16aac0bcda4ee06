#include "bindings/cli/metrics_flags.h"

#include <cstdint>

#include "absl/strings/str_replace.h"

namespace sluice::cli {

std::vector<std::string> WithMetricsFlags(std::vector<std::string> flags) {
  flags.push_back("metrics-port");
  flags.push_back("metrics-address");
  return flags;
}

absl::Status ApplyMetricsFlags(const ParsedArgs& args,
                               DataLoaderConfig* config) {
  absl::StatusOr<int64_t> port = IntFlag(args, "metrics-port", 0, 1, 65535);
  if (!port.ok()) return port.status();
  if (*port != 0) config->set_metrics_port(static_cast<uint32_t>(*port));
  if (auto address = args.flags.find("metrics-address");
      address != args.flags.end()) {
    config->set_metrics_address(address->second);
  }
  return absl::OkStatus();
}

std::string NameMetricsFlags(std::string_view message) {
  return absl::StrReplaceAll(
      message,
      {{"DataLoaderConfig: field 'metrics_port'", "--metrics-port"},
       {"DataLoaderConfig: field 'metrics_address'", "--metrics-address"}});
}

}  // namespace sluice::cli
