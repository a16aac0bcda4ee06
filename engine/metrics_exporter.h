// MetricsExporter: a running pipeline's Prometheus scrape target, as
// DataLoaderConfig.metrics_port and metrics_address ask. Each scrape renders
// the latest metrics snapshot (engine/prometheus_metrics.h) on the server's
// own thread (engine/metrics_http_server.h): it takes the snapshot's shared
// pointer and nothing else from the loader, so no stage ever waits for it.
//
//   auto exporter = MetricsExporter::Start(config, wiring, [this] {
//     return LatestSnapshot();
//   });
//   if (!exporter.ok()) return exporter.status();
#ifndef SLUICE_ENGINE_METRICS_EXPORTER_H_
#define SLUICE_ENGINE_METRICS_EXPORTER_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/metrics_http_server.h"
#include "engine/prometheus_metrics.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice {

class MetricsExporter {
 public:
  // The latest snapshot; called on the exporter's thread, must be cheap.
  using SnapshotSource =
      std::function<std::shared_ptr<const DataLoaderMetricsProto>()>;

  // InvalidArgument naming the field when metrics_port is not a TCP port.
  static absl::Status CheckConfig(const DataLoaderConfig& config);

  // Listens on config's metrics_address:metrics_port (which must be set).
  // Errors name the fields: a bad address, a port in use, a privileged
  // port (MetricsHttpServer::Start's codes).
  static absl::StatusOr<std::unique_ptr<MetricsExporter>> Start(
      const DataLoaderConfig& config, PipelineWiring wiring,
      SnapshotSource source);

  // The port it listens on.
  uint16_t port() const { return server_->port(); }

 private:
  MetricsExporter(PipelineWiring wiring, SnapshotSource source)
      : wiring_(std::move(wiring)), source_(std::move(source)) {}

  const PipelineWiring wiring_;
  const SnapshotSource source_;
  // Last: stopped before the members its requests read go away.
  std::unique_ptr<MetricsHttpServer> server_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_METRICS_EXPORTER_H_
