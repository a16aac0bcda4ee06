#include "bindings/cli/bench_pipeline.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "bindings/cli/demo_data.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/metrics_flags.h"
#include "bindings/cli/pipeline_runner.h"
#include "bindings/report/html_report.h"
#include "engine/config_text.h"
#include "engine/data_loader.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/stage_factory.h"

namespace sluice::cli {
namespace {

constexpr char kBenchPipelineUsage[] =
    "usage: sluice bench pipeline [CONFIG.textproto] [--threads 1,2]\n"
    "                             [--seconds N] [--batches N] [--data DIR]\n"
    "                             [--json] [--metrics-port P]\n"
    "                             [--report FILE.html] [--trace FILE.json]\n"
    "\n"
    "End-to-end throughput of a pipeline, pulling its first output: for\n"
    "each thread count, the time to the first batch, then batches/s and\n"
    "positions/s in steady state, peak RSS and every stage's load. Without\n"
    "CONFIG: the default lc0 training pipeline on the demo data set\n"
    "(generated once, see sluice demo).\n"
    "\n"
    "  --threads LIST  comma-separated worker-thread counts (default 1,2)\n"
    "  --seconds N     steady-state seconds per run (default 10)\n"
    "  --batches N     stop a run after N batches\n"
    "  --data DIR      data directory for file_path_provider stages\n"
    "  --json          print one JSON object instead of the table\n"
    "  --report F      write each run's report (HTML) to F; with several\n"
    "                  thread counts to F-threadsN.html\n"
    "  --trace F       record each run's trace (Perfetto / chrome://tracing)\n"
    "                  to F (F-threadsN.json with several thread counts)\n";

using Clock = std::chrono::steady_clock;

// What the child process reports through the pipe, before the metrics.
struct ChildReport {
  double first_batch_seconds;
  double steady_seconds;
  uint64_t steady_batches;
  uint64_t steady_positions;
  int64_t peak_rss_bytes;
  uint64_t metrics_size;
  bool config_error;
  char error[512];
};

// `path` for the run with `threads` threads: with `several` runs,
// "-threadsN" goes before its extension.
std::string RunPath(const std::string& path, unsigned threads, bool several) {
  if (path.empty() || !several) return path;
  const size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    dot = path.size();
  }
  return absl::StrCat(path.substr(0, dot), "-threads", threads,
                      path.substr(dot));
}

ChildReport RunChild(const DataLoaderConfig& config, double seconds,
                     uint64_t max_batches, const RunOutputs& outputs,
                     std::string* metrics) {
  ChildReport report{};
  try {
    DataLoader loader(CreateStage);
    loader.Configure(config);
    const auto start = Clock::now();
    loader.Start();
    Clock::time_point first{};
    uint64_t batches = 0;
    while (true) {
      const auto taken =
          loader.pipeline().TakeAndDiscard(std::chrono::milliseconds(100));
      const auto now = Clock::now();
      if (taken == ChannelBase::TakeResult::kEndOfStream) break;
      if (taken == ChannelBase::TakeResult::kItem) {
        if (batches++ == 0) first = now;
        if (max_batches > 0 && batches >= max_batches) break;
      }
      if (batches > 0 &&
          std::chrono::duration<double>(now - first).count() >= seconds) {
        break;
      }
    }
    const auto end = Clock::now();
    loader.Stop();
    ThrowIfError(loader.pipeline().status());
    const DataLoaderMetricsProto final_metrics = loader.GetMetrics();
    if (!outputs.report_path.empty()) {
      ThrowIfError(
          report::WriteRunReport({.title = outputs.report_title,
                                  .config = config,
                                  .metrics = final_metrics,
                                  .history = loader.pipeline().GetHistory()},
                                 outputs.report_path));
    }
    ThrowIfError(loader.pipeline().trace_status());
    uint64_t positions = 0;
    for (const StageMetricProto& stage : final_metrics.total_stage_metrics()) {
      positions += stage.tensor_generator().positions();
    }
    report.first_batch_seconds =
        batches > 0 ? std::chrono::duration<double>(first - start).count() : 0;
    report.steady_seconds =
        batches > 0 ? std::chrono::duration<double>(end - first).count() : 0;
    report.steady_batches = batches > 0 ? batches - 1 : 0;
    report.steady_positions =
        batches > 0 ? positions * report.steady_batches / batches : 0;
    *metrics = final_metrics.SerializeAsString();
    report.metrics_size = metrics->size();
  } catch (const ConfigError& error) {
    report.config_error = true;
    std::snprintf(report.error, sizeof(report.error), "%s", error.what());
  } catch (const std::exception& error) {
    std::snprintf(report.error, sizeof(report.error), "%s", error.what());
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  report.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  return report;
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = write(fd, bytes, size);
    if (written <= 0) return false;
    bytes += written;
    size -= written;
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t got = read(fd, bytes, size);
    if (got <= 0) return false;
    bytes += got;
    size -= got;
  }
  return true;
}

}  // namespace

double PipelineMeasurement::BatchesPerSecond() const {
  return steady_seconds > 0 ? steady_batches / steady_seconds : 0;
}

double PipelineMeasurement::PositionsPerSecond() const {
  return steady_seconds > 0 ? steady_positions / steady_seconds : 0;
}

absl::StatusOr<PipelineMeasurement> MeasurePipeline(
    const DataLoaderConfig& config, unsigned threads, double seconds,
    uint64_t max_batches, const RunOutputs& outputs) {
  DataLoaderConfig run_config = config;
  run_config.set_worker_threads(threads);
  if (!outputs.trace_path.empty()) {
    run_config.mutable_trace()->set_file(outputs.trace_path);
  }
  int fds[2];
  if (pipe(fds) != 0) return absl::UnavailableError("pipe failed");
  const pid_t child = fork();
  if (child < 0) return absl::UnavailableError("fork failed");
  if (child == 0) {
    close(fds[0]);
    std::string metrics;
    const ChildReport report =
        RunChild(run_config, seconds, max_batches, outputs, &metrics);
    const bool ok = WriteAll(fds[1], &report, sizeof(report)) &&
                    WriteAll(fds[1], metrics.data(), metrics.size());
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  ChildReport report{};
  std::string metrics;
  bool ok = ReadAll(fds[0], &report, sizeof(report));
  if (ok) {
    metrics.resize(report.metrics_size);
    ok = ReadAll(fds[0], metrics.data(), metrics.size());
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!ok) return absl::InternalError("the benchmark process died");
  if (report.error[0] != '\0') {
    return report.config_error ? absl::InvalidArgumentError(report.error)
                               : absl::InternalError(report.error);
  }
  PipelineMeasurement measurement;
  measurement.threads = threads;
  measurement.first_batch_seconds = report.first_batch_seconds;
  measurement.steady_seconds = report.steady_seconds;
  measurement.steady_batches = report.steady_batches;
  measurement.steady_positions = report.steady_positions;
  measurement.peak_rss_bytes = report.peak_rss_bytes;
  measurement.final_metrics.ParseFromString(metrics);
  return measurement;
}

int RunBenchPipeline(const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(args,
                WithMetricsFlags({"threads", "seconds", "batches", "data",
                                  "report", "trace"}),
                {"json"});
  if (!parsed.ok())
    return UsageError(err, "bench pipeline", parsed.status().message());
  if (parsed->help) {
    out << kBenchPipelineUsage << kMetricsFlagsUsage;
    return 0;
  }
  if (parsed->positional.size() > 1) {
    return UsageError(err, "bench pipeline", "expected at most one CONFIG");
  }
  absl::StatusOr<int64_t> seconds = IntFlag(*parsed, "seconds", 10, 1, 86400);
  absl::StatusOr<int64_t> batches =
      IntFlag(*parsed, "batches", 0, 1, INT64_MAX);
  for (const auto* value : {&seconds, &batches}) {
    if (!value->ok())
      return UsageError(err, "bench pipeline", value->status().message());
  }
  absl::StatusOr<MetricsFlags> metrics = ParseMetricsFlags(*parsed);
  if (!metrics.ok())
    return UsageError(err, "bench pipeline", metrics.status().message());
  std::vector<unsigned> thread_counts;
  const std::string threads_text = parsed->flags.contains("threads")
                                       ? parsed->flags.find("threads")->second
                                       : "1,2";
  for (absl::string_view part : absl::StrSplit(threads_text, ',')) {
    unsigned count = 0;
    if (!absl::SimpleAtoi(part, &count) || count < 1 || count > 1024) {
      return UsageError(
          err, "bench pipeline",
          "bad value '" + threads_text + "' for --threads: expected e.g. 1,2");
    }
    thread_counts.push_back(count);
  }
  const bool json = parsed->flags.contains("json");
  RunOutputs outputs;
  if (auto it = parsed->flags.find("report"); it != parsed->flags.end()) {
    outputs.report_path = it->second;
  }
  if (auto it = parsed->flags.find("trace"); it != parsed->flags.end()) {
    outputs.trace_path = it->second;
  }
  const bool several = thread_counts.size() > 1;
  for (const unsigned threads : thread_counts) {
    for (const auto& [flag, path] :
         {std::pair{"--report", outputs.report_path},
          std::pair{"--trace", outputs.trace_path}}) {
      if (path.empty()) continue;
      if (absl::Status writable =
              CheckOutputFlag(flag, RunPath(path, threads, several));
          !writable.ok()) {
        return UsageError(err, "bench pipeline", writable.message());
      }
    }
  }
  std::string data;
  if (auto it = parsed->flags.find("data"); it != parsed->flags.end()) {
    data = it->second;
  }

  DataLoaderConfig config;
  if (parsed->positional.empty()) {
    if (data.empty()) {
      std::ostream& progress = json ? err : out;
      absl::StatusOr<std::string> generated =
          EnsureDemoData(DemoDataDirectory(), 3000, progress);
      if (!generated.ok()) {
        err << "sluice bench pipeline: " << generated.status().message()
            << "\n";
        return 1;
      }
      data = *generated;
    }
    absl::StatusOr<DataLoaderConfig> lc0 = lc0::MakePipeline(
        {.directories = {data}, .reservoir_size = 50000, .min_fill = 10000});
    if (!lc0.ok())
      return UsageError(err, "bench pipeline", lc0.status().message());
    config = *lc0;
  } else {
    absl::StatusOr<DataLoaderConfig> loaded =
        ReadConfigFile(parsed->positional[0]);
    if (!loaded.ok())
      return UsageError(err, "bench pipeline", loaded.status().message());
    config = *loaded;
    if (!data.empty()) SetDataDirectory(data, &config);
  }

  metrics->ApplyTo(&config);
  std::vector<PipelineMeasurement> runs;
  for (unsigned threads : thread_counts) {
    const RunOutputs run_outputs{
        .report_path = RunPath(outputs.report_path, threads, several),
        .report_title =
            absl::StrCat("sluice bench pipeline ",
                         parsed->positional.empty() ? "(lc0 demo pipeline)"
                                                    : parsed->positional[0],
                         ", ", threads, " thread(s)"),
        .trace_path = RunPath(outputs.trace_path, threads, several)};
    absl::StatusOr<PipelineMeasurement> run =
        MeasurePipeline(config, threads, *seconds, *batches, run_outputs);
    if (!run.ok()) {
      if (run.status().code() == absl::StatusCode::kInvalidArgument) {
        return UsageError(err, "bench pipeline",
                          NameMetricsFlags(run.status().message()));
      }
      err << "sluice bench pipeline: "
          << NameMetricsFlags(run.status().message()) << "\n";
      return 1;
    }
    runs.push_back(*run);
  }

  if (json) {
    std::string text = "{\"runs\":[";
    for (size_t i = 0; i < runs.size(); ++i) {
      const PipelineMeasurement& run = runs[i];
      text += absl::StrFormat(
          "%s{\"threads\":%d,\"positions_per_s\":%.1f,\"batches_per_s\":%.2f,"
          "\"first_batch_s\":%.3f,\"peak_rss_bytes\":%d,\"stage_load\":{",
          i == 0 ? "" : ",", run.threads, run.PositionsPerSecond(),
          run.BatchesPerSecond(), run.first_batch_seconds, run.peak_rss_bytes);
      const auto& stages = run.final_metrics.total_stage_metrics();
      for (int s = 0; s < stages.size(); ++s) {
        text += absl::StrFormat("%s\"%s\":%.3f", s == 0 ? "" : ",",
                                stages[s].name(), stages[s].load().load());
      }
      text += "}}";
    }
    out << text << "]}\n";
    return 0;
  }
  out << absl::StrFormat("%-8s %14s %12s %14s %12s  %s\n", "threads",
                         "positions/s", "batches/s", "first batch", "peak RSS",
                         "stage load");
  for (const PipelineMeasurement& run : runs) {
    std::string loads;
    for (const StageMetricProto& stage :
         run.final_metrics.total_stage_metrics()) {
      loads += absl::StrFormat(" %s=%.2f", stage.name(), stage.load().load());
    }
    out << absl::StrFormat("%-8d %14.0f %12.2f %12.2f s %9.0f MB %s\n",
                           run.threads, run.PositionsPerSecond(),
                           run.BatchesPerSecond(), run.first_batch_seconds,
                           run.peak_rss_bytes / 1e6, loads);
  }
  for (const unsigned threads : thread_counts) {
    if (!outputs.report_path.empty()) {
      out << "report: " << RunPath(outputs.report_path, threads, several)
          << "\n";
    }
    if (!outputs.trace_path.empty()) {
      out << "trace: " << RunPath(outputs.trace_path, threads, several)
          << " (open it in ui.perfetto.dev or chrome://tracing)\n";
    }
  }
  return 0;
}

}  // namespace sluice::cli
