// The HTML run report: one self-contained page (no script, no network,
// no external file) that shows a run over its time: throughput, each
// stage's load, each channel's fill, skips by reason and RSS as SVG
// charts, the bottleneck with its evidence (run_analysis.h, as the CLI's
// summary names it), a table of the stages' totals, and the config.
//
//   RunReportInputs inputs{.title = "sluice run lc0_train.textproto",
//                          .config = config,
//                          .metrics = pipeline.GetMetrics(),
//                          .history = pipeline.GetHistory()};
//   SLUICE_RETURN_IF_ERROR(WriteRunReport(inputs, "run.html"));
//
// Written by `sluice run|demo|bench pipeline --report FILE` and by
// DataLoader.write_report(path) in Python.
#ifndef SLUICE_BINDINGS_REPORT_HTML_REPORT_H_
#define SLUICE_BINDINGS_REPORT_HTML_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/metrics_history.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice::report {

// What a report is made of.
struct RunReportInputs {
  // What ran, shown under the page's heading.
  std::string title;
  // The pipeline's config: stage names, inputs, and shown in full.
  DataLoaderConfig config;
  // The latest metrics: totals since start.
  DataLoaderMetricsProto metrics;
  // The run's metrics over time (Pipeline::GetHistory()).
  std::vector<MetricsHistory::Sample> history;
};

// The page, as HTML text.
std::string RenderRunReport(const RunReportInputs& inputs);

// Writes the page to `path` atomically (a reader sees the old file or the
// whole new one); the error names the path.
absl::Status WriteRunReport(const RunReportInputs& inputs,
                            const std::string& path);

}  // namespace sluice::report

#endif  // SLUICE_BINDINGS_REPORT_HTML_REPORT_H_
