#include "bindings/cli/run_command.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/metrics_flags.h"
#include "bindings/cli/pipeline_runner.h"
#include "engine/config_text.h"

namespace sluice::cli {
namespace {

constexpr char kRunUsage[] =
    "usage: sluice run CONFIG.textproto [--batches N] [--seconds S]\n"
    "                  [--metrics-json FILE] [--data DIR]\n"
    "                  [--checkpoint FILE [--checkpoint-every N]]\n"
    "                  [--resume FILE[,FILE...]] [--metrics-port P]\n"
    "                  [--report FILE.html] [--trace FILE.json]\n"
    "\n"
    "Runs the pipeline described by a text-format DataLoaderConfig, pulling\n"
    "its first output, with a live view of every stage (plain lines when\n"
    "stdout is not a terminal). Ctrl-C stops it and prints the summary.\n"
    "\n"
    "  --batches N         stop after N items of the output\n"
    "  --seconds S         stop after S seconds\n"
    "  --metrics-json FILE append every metrics snapshot as a JSON line\n"
    "  --data DIR          read this directory: replaces the directories of\n"
    "                      every file_path_provider stage\n"
    "  --checkpoint FILE   write a checkpoint to FILE when the run ends (and\n"
    "                      every N batches with --checkpoint-every N);\n"
    "                      needs `deterministic: true` or `resumable:\n"
    "                      true` in the config\n"
    "  --resume FILE       continue from a checkpoint of the same config:\n"
    "                      deterministic: the batches are those the\n"
    "                      checkpointed run would have produced next;\n"
    "                      resumable: nothing repeated or lost\n"
    "  --resume A,B,...    continue from the checkpoints every rank of a\n"
    "                      data-parallel run took at one step, on this\n"
    "                      config's rank and world_size (any number of\n"
    "                      ranks: each takes its share, see\n"
    "                      docs/guarantees.md)\n"
    "  --report FILE.html  write the run report when the run ends: one\n"
    "                      page, charts of throughput, stage load, channel\n"
    "                      fill, skips and RSS over time, the bottleneck\n"
    "                      and why, the config\n"
    "  --trace FILE.json   record a trace of the run (busy spans, channel\n"
    "                      fills, batches, reads, checkpoints) for Perfetto\n"
    "                      UI or chrome://tracing; bounds as in the\n"
    "                      config's `trace` (default: 1,000,000 events)\n";

}  // namespace

int RunRunCommand(const std::vector<std::string>& args, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(
      args, WithMetricsFlags({"batches", "seconds", "metrics-json", "data",
                              "checkpoint", "checkpoint-every", "resume",
                              "report", "trace"}));
  if (!parsed.ok()) return UsageError(err, "run", parsed.status().message());
  if (parsed->help) {
    out << kRunUsage << kMetricsFlagsUsage;
    return 0;
  }
  if (parsed->positional.size() != 1) {
    return UsageError(err, "run", "expected exactly one CONFIG.textproto");
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  absl::StatusOr<int64_t> batches = IntFlag(*parsed, "batches", 0, 1, kMax);
  absl::StatusOr<int64_t> seconds = IntFlag(*parsed, "seconds", 0, 1, kMax);
  absl::StatusOr<int64_t> checkpoint_every =
      IntFlag(*parsed, "checkpoint-every", 0, 1, kMax);
  for (const auto* value : {&batches, &seconds, &checkpoint_every}) {
    if (!value->ok()) return UsageError(err, "run", value->status().message());
  }
  absl::StatusOr<MetricsFlags> metrics = ParseMetricsFlags(*parsed);
  if (!metrics.ok()) return UsageError(err, "run", metrics.status().message());
  absl::StatusOr<DataLoaderConfig> config =
      ReadConfigFile(parsed->positional[0]);
  if (!config.ok()) return UsageError(err, "run", config.status().message());
  if (auto data = parsed->flags.find("data"); data != parsed->flags.end()) {
    SetDataDirectory(data->second, &*config);
  }
  metrics->ApplyTo(&*config);
  RunLimits limits{.max_batches = static_cast<uint64_t>(*batches),
                   .max_seconds = static_cast<double>(*seconds)};
  if (auto path = parsed->flags.find("checkpoint");
      path != parsed->flags.end()) {
    limits.checkpoint_path = path->second;
  }
  if (auto path = parsed->flags.find("resume"); path != parsed->flags.end()) {
    limits.resume_paths =
        std::vector<std::string>(absl::StrSplit(path->second, ','));
  }
  limits.checkpoint_every = static_cast<uint64_t>(*checkpoint_every);
  if (limits.checkpoint_every > 0 && limits.checkpoint_path.empty()) {
    return UsageError(err, "run", "--checkpoint-every needs --checkpoint FILE");
  }
  if (auto path = parsed->flags.find("report"); path != parsed->flags.end()) {
    limits.report_path = path->second;
    limits.report_title = "sluice run " + parsed->positional[0];
  }
  if (auto path = parsed->flags.find("trace"); path != parsed->flags.end()) {
    limits.trace_path = path->second;
  }
  if (auto json = parsed->flags.find("metrics-json");
      json != parsed->flags.end()) {
    limits.metrics_json_path = json->second;
  }
  absl::StatusOr<RunReport> report =
      RunWithLiveView(*config, limits, out, StdoutIsInteractive());
  if (!report.ok()) {
    if (report.status().code() == absl::StatusCode::kInvalidArgument) {
      return UsageError(err, "run",
                        NameMetricsFlags(report.status().message()));
    }
    err << "sluice run: " << NameMetricsFlags(report.status().message())
        << "\n";
    return 1;
  }
  return 0;
}

}  // namespace sluice::cli
