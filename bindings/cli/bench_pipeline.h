// `sluice bench pipeline [CONFIG]`: end-to-end throughput of a pipeline
// (default: the lc0 training pipeline on the demo data set) for one or more
// worker-thread counts: positions/s, batches/s, time to the first batch,
// peak RSS and per-stage load, as a table and JSON.
#ifndef SLUICE_BINDINGS_CLI_BENCH_PIPELINE_H_
#define SLUICE_BINDINGS_CLI_BENCH_PIPELINE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice::cli {

// One measured run of a pipeline.
struct PipelineMeasurement {
  unsigned threads = 0;
  double first_batch_seconds = 0;
  // After the first batch: the steady state.
  double steady_seconds = 0;
  uint64_t steady_batches = 0;
  uint64_t steady_positions = 0;
  int64_t peak_rss_bytes = 0;
  DataLoaderMetricsProto final_metrics;
  double BatchesPerSecond() const;
  double PositionsPerSecond() const;
};

// What a measured run writes besides its figures ("" = nothing).
struct RunOutputs {
  // The HTML run report (bindings/report/html_report.h), and its title.
  std::string report_path;
  std::string report_title;
  // A trace of the run (DataLoaderConfig.trace.file).
  std::string trace_path;
};

// Runs `config` with `threads` worker threads in a child process (so peak
// RSS is this run's own) for `seconds` after the first batch, or until
// `max_batches` or end of stream; writes `outputs` when the run ends.
absl::StatusOr<PipelineMeasurement> MeasurePipeline(
    const DataLoaderConfig& config, unsigned threads, double seconds,
    uint64_t max_batches, const RunOutputs& outputs = {});

// Runs `sluice bench pipeline` with the words after "pipeline".
int RunBenchPipeline(const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_BENCH_PIPELINE_H_
