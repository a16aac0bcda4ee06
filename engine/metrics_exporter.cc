#include "engine/metrics_exporter.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/process_stats.h"

namespace sluice {

absl::Status MetricsExporter::CheckConfig(const DataLoaderConfig& config) {
  if (config.metrics_port() > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DataLoaderConfig: field 'metrics_port' (", config.metrics_port(),
        ") must be a TCP port, 1-65535 (0: no metrics server)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(
    const DataLoaderConfig& config, PipelineWiring wiring,
    SnapshotSource source) {
  if (absl::Status checked = CheckConfig(config); !checked.ok()) {
    return checked;
  }
  std::unique_ptr<MetricsExporter> exporter(
      new MetricsExporter(std::move(wiring), std::move(source)));
  MetricsExporter* self = exporter.get();
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start(
          {.address = config.metrics_address(),
           .port = static_cast<uint16_t>(config.metrics_port())},
          [self] {
            return RenderPrometheusMetrics(*self->source_(), self->wiring_,
                                           ReadProcessStats());
          });
  if (!server.ok()) {
    const bool address =
        server.status().code() == absl::StatusCode::kInvalidArgument;
    return absl::Status(
        server.status().code(),
        absl::StrCat("DataLoaderConfig: field '",
                     address ? "metrics_address" : "metrics_port", "' (",
                     address ? config.metrics_address()
                             : absl::StrCat(config.metrics_port()),
                     "): ", server.status().message()));
  }
  exporter->server_ = std::move(*server);
  return exporter;
}

}  // namespace sluice
