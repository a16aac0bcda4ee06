#include "bindings/cli/pipeline_runner.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "bindings/cli/live_view.h"
#include "bindings/report/html_report.h"
#include "bindings/report/run_analysis.h"
#include "engine/config_text.h"
#include "engine/data_loader.h"
#include "engine/status_macros.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "io/atomic_file.h"
#include "stages/stage_factory.h"

namespace sluice::cli {
namespace {

// Replaces the file at `path` by `bytes` atomically (a crash leaves the
// previous checkpoint or the new one, never a mix).
absl::Status WriteCheckpointFile(const std::string& path,
                                 std::string_view bytes) {
  const std::filesystem::path file(path);
  const std::string dir =
      file.has_parent_path() ? file.parent_path().string() : ".";
  return WriteFileAtomically(dir, file.filename().string(), bytes);
}

std::atomic<bool> g_interrupted{false};

void OnSignal(int) { g_interrupted.store(true); }

// Installs Ctrl-C / SIGTERM handlers for its lifetime.
class InterruptScope {
 public:
  InterruptScope() {
    g_interrupted.store(false);
    previous_int_ = std::signal(SIGINT, OnSignal);
    previous_term_ = std::signal(SIGTERM, OnSignal);
  }
  ~InterruptScope() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
  }

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
};

// After the run: writes the report and tells where it and the trace are.
absl::Status WriteOutputs(Pipeline& pipeline, const DataLoaderConfig& config,
                          const RunLimits& limits,
                          const DataLoaderMetricsProto& metrics,
                          const std::vector<MetricsHistory::Sample>& history,
                          std::ostream& out) {
  if (!limits.report_path.empty()) {
    const absl::Status written =
        report::WriteRunReport({.title = limits.report_title,
                                .config = config,
                                .metrics = metrics,
                                .history = history},
                               limits.report_path);
    if (!written.ok()) {
      return absl::Status(written.code(),
                          absl::StrCat("--report: ", written.message()));
    }
    out << "report: " << limits.report_path << "\n";
  }
  if (config.has_trace()) {
    const absl::Status written = pipeline.trace_status();
    if (!written.ok() && !limits.trace_path.empty()) {
      return absl::Status(
          written.code(),
          absl::StrCat("--trace ", limits.trace_path, ": ", written.message()));
    }
    SLUICE_RETURN_IF_ERROR(written);
    out << "trace: " << config.trace().file()
        << " (open it in ui.perfetto.dev or chrome://tracing)\n";
  }
  return absl::OkStatus();
}

// The width of the terminal on stdout; 0 when unknown.
int TerminalColumns() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

}  // namespace

absl::Status CheckOutputFlag(absl::string_view flag, const std::string& path) {
  absl::Status writable = CheckFileWritable(path);
  if (writable.ok()) return writable;
  return absl::InvalidArgumentError(
      absl::StrCat(flag, " ", path, ": ", writable.message()));
}

void SetDataDirectory(const std::string& directory, DataLoaderConfig* config) {
  for (StageConfig& stage : *config->mutable_stage()) {
    if (!stage.has_file_path_provider()) continue;
    stage.mutable_file_path_provider()->clear_directory();
    stage.mutable_file_path_provider()->add_directory(directory);
  }
}

bool StdoutIsInteractive() {
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) == 1 &&
         (term == nullptr || std::string(term) != "dumb");
}

absl::StatusOr<RunReport> RunWithLiveView(const DataLoaderConfig& run_config,
                                          const RunLimits& limits,
                                          std::ostream& out, bool interactive) {
  if (!limits.report_path.empty()) {
    SLUICE_RETURN_IF_ERROR(CheckOutputFlag("--report", limits.report_path));
  }
  DataLoaderConfig config = run_config;
  if (!limits.trace_path.empty()) {
    SLUICE_RETURN_IF_ERROR(CheckOutputFlag("--trace", limits.trace_path));
    config.mutable_trace()->set_file(limits.trace_path);
  }
  std::ofstream metrics_json;
  if (!limits.metrics_json_path.empty()) {
    metrics_json.open(limits.metrics_json_path, std::ios::app);
    if (!metrics_json) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot write metrics to '", limits.metrics_json_path, "'"));
    }
  }
  DataLoader loader(CreateStage);
  try {
    loader.Configure(config);
    if (limits.resume_paths.size() == 1) {
      absl::StatusOr<std::string> checkpoint =
          ReadWholeFile(limits.resume_paths.front());
      if (!checkpoint.ok()) return checkpoint.status();
      loader.Resume(*checkpoint);
    } else if (!limits.resume_paths.empty()) {
      std::vector<std::string> checkpoints;
      for (const std::string& path : limits.resume_paths) {
        absl::StatusOr<std::string> checkpoint = ReadWholeFile(path);
        if (!checkpoint.ok()) return checkpoint.status();
        checkpoints.push_back(*std::move(checkpoint));
      }
      loader.Resume(checkpoints);
    }
    loader.Start();
  } catch (const ConfigError& error) {
    return absl::InvalidArgumentError(error.what());
  } catch (const PipelineError& error) {
    // E.g. the metrics port is taken.
    return absl::UnavailableError(error.what());
  }
  if (const uint16_t port = loader.pipeline().metrics_port(); port != 0) {
    const std::string& address = config.metrics_address();
    out << "Prometheus metrics: http://"
        << (address.find(':') != std::string::npos ? "[" + address + "]"
                                                   : address)
        << ":" << port << "/metrics\n";
  }
  const auto write_checkpoint = [&]() -> absl::Status {
    try {
      return WriteCheckpointFile(limits.checkpoint_path, loader.Checkpoint());
    } catch (const ConfigError& error) {
      return absl::InvalidArgumentError(error.what());
    }
  };
  absl::StatusOr<ChannelBase*> found = loader.pipeline().FindOutput("");
  if (!found.ok()) {
    return absl::InvalidArgumentError(
        "the pipeline has no output to pull batches from; a pipeline that "
        "ends in a sink (batch_file_writer) runs from the Python or C++ API "
        "(bindings/python/examples/lc0_queue_producer.py)");
  }
  const InterruptScope interrupt_scope;
  LiveView view(config, out, interactive, interactive ? TerminalColumns() : 0);
  RunReport report;
  uint64_t last_written = UINT64_MAX;
  const auto write_json = [&](const DataLoaderMetricsProto& metrics) {
    if (!metrics_json.is_open() || metrics.snapshot_index() == last_written) {
      return;
    }
    last_written = metrics.snapshot_index();
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(metrics, &json, options);
    metrics_json << json << "\n";
    metrics_json.flush();
  };

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto next_render = start;
  while (!g_interrupted.load()) {
    const auto taken =
        loader.pipeline().TakeAndDiscard(std::chrono::milliseconds(50));
    if (taken == ChannelBase::TakeResult::kEndOfStream) break;
    if (taken == ChannelBase::TakeResult::kItem) {
      ++report.batches;
      if (limits.checkpoint_every > 0 &&
          report.batches % limits.checkpoint_every == 0) {
        if (absl::Status written = write_checkpoint(); !written.ok()) {
          loader.Stop();
          return written;
        }
      }
      if (report.batches == limits.max_batches) break;
    }
    const auto now = Clock::now();
    if (limits.max_seconds > 0 &&
        std::chrono::duration<double>(now - start).count() >=
            limits.max_seconds) {
      break;
    }
    if (now >= next_render) {
      next_render = now + std::chrono::milliseconds(100);
      const DataLoaderMetricsProto metrics = loader.GetMetrics();
      if (interactive) view.SetColumns(TerminalColumns());
      view.Render(metrics);
      write_json(metrics);
    }
  }
  report.interrupted = g_interrupted.load();
  if (!limits.checkpoint_path.empty() && loader.pipeline().status().ok()) {
    if (absl::Status written = write_checkpoint(); !written.ok()) {
      loader.Stop();
      return written;
    }
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  loader.Stop();
  report.final_metrics = loader.GetMetrics();
  write_json(report.final_metrics);
  const std::vector<MetricsHistory::Sample> history =
      loader.pipeline().GetHistory();
  view.PrintSummary(report.final_metrics, report::AverageChannelFill(history));
  SLUICE_RETURN_IF_ERROR(WriteOutputs(loader.pipeline(), config, limits,
                                      report.final_metrics, history, out));
  if (absl::Status status = loader.pipeline().status(); !status.ok()) {
    return status;
  }
  return report;
}

}  // namespace sluice::cli
