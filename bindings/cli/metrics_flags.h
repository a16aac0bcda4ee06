// The Prometheus exporter's flags, shared by the commands that run a
// pipeline (run, demo, bench pipeline):
//
//   ParseArgs(args, WithMetricsFlags({"batches", ...}));
//   absl::StatusOr<MetricsFlags> metrics = ParseMetricsFlags(*parsed);
//   ...
//   metrics->ApplyTo(&config);
//   ...
//   err << NameMetricsFlags(status.message());
#ifndef SLUICE_BINDINGS_CLI_METRICS_FLAGS_H_
#define SLUICE_BINDINGS_CLI_METRICS_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bindings/cli/flags.h"
#include "proto/data_loader_config.pb.h"

namespace sluice::cli {

// The lines of a command's usage text that describe the flags.
inline constexpr char kMetricsFlagsUsage[] =
    "  --metrics-port P      serve Prometheus metrics on\n"
    "                        http://127.0.0.1:P/metrics while it runs\n"
    "  --metrics-address A   listen on A instead (0.0.0.0: every interface)\n";

// `flags` plus metrics-port and metrics-address.
std::vector<std::string> WithMetricsFlags(std::vector<std::string> flags);

// --metrics-port and --metrics-address as given.
struct MetricsFlags {
  uint32_t port = 0;  // 0: not given
  std::optional<std::string> address;
  // Sets the config's metrics_port and metrics_address to those given.
  void ApplyTo(DataLoaderConfig* config) const;
};

// The flags; an InvalidArgument naming the flag for a port outside 1-65535.
absl::StatusOr<MetricsFlags> ParseMetricsFlags(const ParsedArgs& args);

// `message` with the config's field names replaced by the flags that set
// them (a port in use or not allowed is reported as a field error).
std::string NameMetricsFlags(absl::string_view message);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_METRICS_FLAGS_H_
