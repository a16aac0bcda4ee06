// The loader's metrics as a Prometheus page: a DataLoaderMetricsProto
// snapshot (with the pipeline's wiring) turned into metric families named
// by Prometheus conventions (`sluice_` prefix, base units, `_total` on
// counters), plus the standard `process_*` families.
//
//   std::string body = RenderPrometheusMetrics(pipeline.GetMetrics(),
//                                              wiring, ReadProcessStats());
//
// Families (labels): per stage (stage) sluice_stage_info (type),
// sluice_stage_load, sluice_stage_busy_seconds_total,
// sluice_stage_capacity_seconds_total, sluice_stage_workers,
// sluice_stage_items_in_total, sluice_stage_items_out_total,
// sluice_stage_skipped_total (reason); per channel (stage, output)
// sluice_channel_items, sluice_channel_capacity, sluice_channel_sent_total,
// sluice_channel_received_total, sluice_channel_dropped_total,
// sluice_channel_closed; per loader output (output) sluice_batches_total;
// sluice_examples_total; sluice_io_reads_total and
// sluice_io_read_bytes_total (backend: page_cache or the backend's name);
// sluice_pipeline_failed; and every numeric field of the stage-specific
// metrics as sluice_<stage type>_<field>[_total] (stage). Counters come from
// the totals since start, gauges from the last interval.
#ifndef SLUICE_ENGINE_PROMETHEUS_METRICS_H_
#define SLUICE_ENGINE_PROMETHEUS_METRICS_H_

#include <string>
#include <vector>

#include "engine/process_stats.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice {

// What the metrics snapshot does not say of a pipeline: which channel each
// stage reads and which channels the loader hands out.
struct PipelineWiring {
  // One output channel: the stage that owns it and its name.
  struct Channel {
    std::string stage;
    std::string output;
  };
  struct Input {
    std::string consumer;  // the stage that reads `channel`
    Channel channel;
  };
  struct Output {
    std::string alias;  // as the loader's caller names it
    Channel channel;
  };
  std::vector<Input> inputs;
  std::vector<Output> outputs;
};

// The page for `metrics` (empty before the first snapshot: only the process
// families and sluice_pipeline_failed).
std::string RenderPrometheusMetrics(const DataLoaderMetricsProto& metrics,
                                    const PipelineWiring& wiring,
                                    const ProcessStats& process);

}  // namespace sluice

#endif  // SLUICE_ENGINE_PROMETHEUS_METRICS_H_
