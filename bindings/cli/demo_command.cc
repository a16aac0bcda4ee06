#include "bindings/cli/demo_command.h"

#include <cstdint>
#include <utility>

#include "absl/strings/string_view.h"
#include "bindings/cli/demo_data.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/metrics_flags.h"
#include "bindings/cli/pipeline_runner.h"
#include "stages/audio/default_pipeline.h"
#include "stages/lc0/default_pipeline.h"

namespace sluice::cli {
namespace {

constexpr char kDemoUsage[] =
    "usage: sluice demo [--workload lc0|audio] [--data DIR] [--seconds N]\n"
    "                   [--batches N] [--threads N] [--games N] [--clips N]\n"
    "                   [--metrics-port P] [--report FILE.html]\n"
    "                   [--trace FILE.json]\n"
    "\n"
    "Runs a default training pipeline and shows live what each stage does\n"
    "and how fast batches come out. Without --data it first generates a\n"
    "synthetic data set (once; reused from the cache, see SLUICE_CACHE_DIR).\n"
    "\n"
    "  lc0:   file discovery, chunk pool, unpacker, reservoir, tensors;\n"
    "         batches of 1024 positions\n"
    "  audio: Arrow files, decode + resample to 16 kHz, random 1 s crop,\n"
    "         log-mel spectrogram, reservoir; batches of 256 clips\n"
    "\n"
    "  --workload W  lc0 (default) or audio\n"
    "  --data DIR    read the workload's data from DIR (lc0: tars or .gz\n"
    "                chunks; audio: Arrow files as `sluice gen audio` writes)\n"
    "  --seconds N   run for N seconds (default 30)\n"
    "  --batches N   stop sooner, after N batches (default: no limit)\n"
    "  --threads N   executor threads (default: one per core)\n"
    "  --games N     lc0: games in the generated data set (default 3000)\n"
    "  --clips N     audio: clips in the generated data set (default 2000)\n"
    "  --report F    write the run report (one HTML page) to F at the end\n"
    "  --trace F     record a trace for Perfetto UI / chrome://tracing in F\n";

}  // namespace

int RunDemoCommand(const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(
      args, WithMetricsFlags({"workload", "data", "seconds", "batches",
                              "threads", "games", "clips", "report", "trace"}));
  if (!parsed.ok()) return UsageError(err, "demo", parsed.status().message());
  if (parsed->help) {
    out << kDemoUsage << kMetricsFlagsUsage;
    return 0;
  }
  if (!parsed->positional.empty()) {
    return UsageError(err, "demo",
                      "unexpected argument '" + parsed->positional[0] + "'");
  }
  std::string workload = "lc0";
  if (auto it = parsed->flags.find("workload"); it != parsed->flags.end()) {
    workload = it->second;
  }
  if (workload != "lc0" && workload != "audio") {
    return UsageError(
        err, "demo",
        "bad value '" + workload + "' for --workload (lc0 or audio)");
  }
  const bool audio = workload == "audio";
  RunLimits limits;
  if (auto it = parsed->flags.find("report"); it != parsed->flags.end()) {
    limits.report_path = it->second;
    limits.report_title = "sluice demo --workload " + workload;
  }
  if (auto it = parsed->flags.find("trace"); it != parsed->flags.end()) {
    limits.trace_path = it->second;
  }
  // Before generating data: a bad path fails at once.
  for (const auto& [flag, path] : {std::pair{"--report", limits.report_path},
                                   std::pair{"--trace", limits.trace_path}}) {
    if (path.empty()) continue;
    if (absl::Status writable = CheckOutputFlag(flag, path); !writable.ok()) {
      return UsageError(err, "demo", writable.message());
    }
  }
  absl::StatusOr<int64_t> seconds = IntFlag(*parsed, "seconds", 30, 1, 86400);
  absl::StatusOr<int64_t> batches =
      IntFlag(*parsed, "batches", 0, 0, int64_t{1} << 40);
  absl::StatusOr<int64_t> threads = IntFlag(*parsed, "threads", 0, 0, 1024);
  absl::StatusOr<int64_t> games = IntFlag(*parsed, "games", 3000, 1, 1'000'000);
  absl::StatusOr<int64_t> clips = IntFlag(*parsed, "clips", 2000, 1, 1'000'000);
  for (const auto* value : {&seconds, &batches, &threads, &games, &clips}) {
    if (!value->ok()) return UsageError(err, "demo", value->status().message());
  }
  absl::StatusOr<MetricsFlags> metrics = ParseMetricsFlags(*parsed);
  if (!metrics.ok()) return UsageError(err, "demo", metrics.status().message());
  std::string data;
  if (auto it = parsed->flags.find("data"); it != parsed->flags.end()) {
    data = it->second;
  } else {
    absl::StatusOr<std::string> generated =
        audio ? EnsureAudioDemoData(AudioDemoDataDirectory(*clips), *clips, out)
              : EnsureDemoData(DemoDataDirectory(), static_cast<int>(*games),
                               out);
    if (!generated.ok()) {
      err << "sluice demo: " << generated.status().message() << "\n";
      return 1;
    }
    data = *generated;
  }
  const auto worker_threads = static_cast<uint32_t>(*threads);
  absl::StatusOr<DataLoaderConfig> config =
      audio ? audio::MakePipeline({.directories = {data},
                                   .mode = audio::PipelineMode::kTrain,
                                   // A demo-sized reservoir: 2000 spectrograms
                                   // (~52 MB), output from 500.
                                   .shuffle_buffer = 2000,
                                   .min_fill = 500,
                                   .worker_threads = worker_threads})
            : lc0::MakePipeline({.directories = {data},
                                 .mode = lc0::PipelineMode::kTrain,
                                 // A demo-sized reservoir: 50k frames (~420
                                 // MB), output from 10k.
                                 .reservoir_size = 50000,
                                 .min_fill = 10000,
                                 .worker_threads = worker_threads});
  if (!config.ok()) return UsageError(err, "demo", config.status().message());
  config->set_metrics_interval_seconds(0.5);
  metrics->ApplyTo(&*config);
  out << "sluice demo: default " << workload << " training pipeline on " << data
      << " for " << *seconds << " s (Ctrl-C stops early)\n";
  limits.max_batches = static_cast<uint64_t>(*batches);
  limits.max_seconds = static_cast<double>(*seconds);
  absl::StatusOr<RunReport> report =
      RunWithLiveView(*config, limits, out, StdoutIsInteractive());
  if (!report.ok()) {
    err << "sluice demo: " << NameMetricsFlags(report.status().message())
        << "\n";
    return 1;
  }
  if (audio) {
    out << "\nnext: sluice run proto/examples/audio_train.textproto --data "
        << data << "\n      sluice gen audio DIR --clips N\n";
  } else {
    out << "\nnext: sluice run proto/examples/lc0_train.textproto --data "
        << data << "\n      sluice bench io " << data << "\n";
  }
  return 0;
}

}  // namespace sluice::cli
