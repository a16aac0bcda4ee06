#include "bindings/cli/demo_command.h"

#include <cstdint>

#include "absl/strings/string_view.h"
#include "bindings/cli/demo_data.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/pipeline_runner.h"
#include "stages/lc0/default_pipeline.h"

namespace sluice::cli {
namespace {

constexpr char kUsage[] =
    "usage: sluice demo [--data DIR] [--seconds N] [--threads N] [--games N]\n"
    "\n"
    "Runs the default lc0 training pipeline (file discovery, chunk pool,\n"
    "unpacker, reservoir, tensors) and shows live what each stage does and\n"
    "how fast batches of 1024 positions come out. Without --data it first\n"
    "generates a synthetic data set (once; reused from the cache, see\n"
    "SLUICE_CACHE_DIR).\n"
    "\n"
    "  --data DIR    read lc0 data (tars or .gz chunks) from DIR\n"
    "  --seconds N   run for N seconds (default 30)\n"
    "  --threads N   executor threads (default: one per core)\n"
    "  --games N     games in the generated data set (default 3000)\n";

int UsageError(std::ostream& err, absl::string_view message) {
  err << "sluice demo: " << message << " (see sluice demo --help)\n";
  return 2;
}

}  // namespace

int RunDemoCommand(const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(args, {"data", "seconds", "threads", "games"});
  if (!parsed.ok()) return UsageError(err, parsed.status().message());
  if (parsed->help) {
    out << kUsage;
    return 0;
  }
  if (!parsed->positional.empty()) {
    return UsageError(err,
                      "unexpected argument '" + parsed->positional[0] + "'");
  }
  absl::StatusOr<int64_t> seconds = IntFlag(*parsed, "seconds", 30, 1, 86400);
  absl::StatusOr<int64_t> threads = IntFlag(*parsed, "threads", 0, 0, 1024);
  absl::StatusOr<int64_t> games = IntFlag(*parsed, "games", 3000, 1, 1'000'000);
  for (const auto* value : {&seconds, &threads, &games}) {
    if (!value->ok()) return UsageError(err, value->status().message());
  }
  std::string data;
  if (auto it = parsed->flags.find("data"); it != parsed->flags.end()) {
    data = it->second;
  } else {
    absl::StatusOr<std::string> generated =
        EnsureDemoData(DemoDataDirectory(), static_cast<int>(*games), out);
    if (!generated.ok()) {
      err << "sluice demo: " << generated.status().message() << "\n";
      return 1;
    }
    data = *generated;
  }
  absl::StatusOr<DataLoaderConfig> config = lc0::MakePipeline(
      {.directories = {data},
       .mode = lc0::PipelineMode::kTrain,
       // A demo-sized reservoir: 50k frames (~420 MB), output from 10k.
       .reservoir_size = 50000,
       .min_fill = 10000,
       .worker_threads = static_cast<uint32_t>(*threads)});
  if (!config.ok()) return UsageError(err, config.status().message());
  config->set_metrics_interval_seconds(0.5);
  out << "sluice demo: default lc0 training pipeline on " << data << " for "
      << *seconds << " s (Ctrl-C stops early)\n";
  absl::StatusOr<RunReport> report =
      RunWithLiveView(*config, {.max_seconds = static_cast<double>(*seconds)},
                      out, StdoutIsInteractive());
  if (!report.ok()) {
    err << "sluice demo: " << report.status().message() << "\n";
    return 1;
  }
  out << "\nnext: sluice run proto/examples/lc0_train.textproto --data " << data
      << "\n      sluice bench io " << data << "\n";
  return 0;
}

}  // namespace sluice::cli
