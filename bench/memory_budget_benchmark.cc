// Peak RSS against DataLoaderConfig.memory_budget_bytes on the default lc0
// and audio training pipelines, for budgets from the pipeline's minimum up
// to what its default settings need (docs/tuning.md).
//
//   out/release/bench/memory_budget_benchmark [--seconds S] [--levels N]
//       [--workload lc0|audio|both] [--dir DIR]
//
// Data: 400 generated lc0 games (10 tars) and 2000 `sluice gen audio`
// clips (4 Arrow files) in a fresh directory under /tmp (or DIR). Each
// budget runs in a forked child (peak RSS is per process): it notes its
// resident set, builds the loader (2 worker threads) with the budget, and
// takes batches for S seconds (default 8) as a slow trainer would (10 ms
// per batch, so queues and reservoirs fill up), then reports its peak RSS
// (VmHWM). The budget covers what the loader adds to the process, so the
// ratio is (peak RSS - RSS before the loader) / budget; the target is
// <= 1.1. Budgets: the minimum and N - 1 (default 4) more evenly up to the
// default settings' modelled needs. One row per budget, then one JSON line
// per workload (prefixed "JSON ").
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bindings/cli/audio_data.h"
#include "engine/data_loader.h"
#include "engine/memory_model.h"
#include "engine/pipeline.h"
#include "engine/typed_batch.h"
#include "stages/audio/default_pipeline.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/stage_factory.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "memory_budget_benchmark: %s\n", message.c_str());
  std::exit(1);
}

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS").
uint64_t StatusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10) * 1024;
    }
  }
  return 0;
}

struct Options {
  double seconds = 8;
  int levels = 5;
  std::string workload = "both";
  std::string dir;
};

struct Workload {
  std::string name;
  DataLoaderConfig config;
};

void WriteData(const std::string& dir) {
  if (std::filesystem::exists(dir + "/complete")) return;
  std::filesystem::create_directories(dir + "/lc0");
  absl::StatusOr<lc0::GeneratedFiles> games =
      lc0::WriteGames({.seed = 7}, {.mode = lc0::OutputMode::kTar,
                                    .dir = dir + "/lc0",
                                    .games = 400,
                                    .games_per_tar = 40});
  if (!games.ok()) Die(std::string(games.status().message()));
  absl::StatusOr<cli::AudioDataset> clips = cli::WriteAudioDataset(
      {.dir = dir + "/audio", .clips = 2000, .classes = 8, .files = 4});
  if (!clips.ok()) Die(std::string(clips.status().message()));
  std::ofstream(dir + "/complete") << "ok\n";
}

std::vector<Workload> Workloads(const Options& options) {
  std::vector<Workload> workloads;
  if (options.workload != "audio") {
    absl::StatusOr<DataLoaderConfig> config = lc0::MakePipeline(
        {.directories = {options.dir + "/lc0"}, .worker_threads = 2});
    if (!config.ok()) Die(std::string(config.status().message()));
    workloads.push_back({"lc0", *config});
  }
  if (options.workload != "lc0") {
    absl::StatusOr<DataLoaderConfig> config = audio::MakePipeline(
        {.directories = {options.dir + "/audio"}, .worker_threads = 2});
    if (!config.ok()) Die(std::string(config.status().message()));
    workloads.push_back({"audio", *config});
  }
  return workloads;
}

// The plan of `config` with an unlimited budget: its configured and
// minimum bytes.
MemoryBudgetMetricsProto Model(DataLoaderConfig config) {
  config.set_memory_budget_bytes(uint64_t{1} << 50);
  Pipeline pipeline(CreateStage);
  if (absl::Status status = pipeline.Configure(config); !status.ok()) {
    Die(std::string(status.message()));
  }
  return pipeline.GetMetrics().memory_budget();
}

struct RunResult {
  uint64_t before = 0;  // RSS before the loader
  uint64_t peak = 0;    // VmHWM at the end
  uint64_t planned = 0;
  uint64_t batches = 0;
  std::string lowered;  // the settings the plan lowered
};

// In the child: one run with `budget`; writes the result to `fd`.
void RunChild(DataLoaderConfig config, uint64_t budget, double seconds,
              int fd) {
  RunResult result;
  result.before = StatusBytes("VmRSS");
  config.set_memory_budget_bytes(budget);
  {
    DataLoader loader(CreateStage);
    loader.Configure(config);
    loader.Start();
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end) {
      std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
      if (!batch) break;
      ++result.batches;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const MemoryBudgetMetricsProto plan = loader.GetMetrics().memory_budget();
    result.planned = plan.planned_bytes();
    for (const MemorySettingProto& setting : plan.setting()) {
      if (setting.planned() == setting.configured()) continue;
      absl::StrAppend(&result.lowered, result.lowered.empty() ? "" : ", ",
                      setting.stage(), " ", setting.setting(), " ",
                      setting.configured(), "->", setting.planned());
    }
    result.peak = StatusBytes("VmHWM");
    loader.Stop();
  }
  const std::string line =
      absl::StrCat(result.before, " ", result.peak, " ", result.planned, " ",
                   result.batches, " ", result.lowered);
  if (write(fd, line.data(), line.size()) < 0) std::_Exit(2);
  std::_Exit(0);
}

RunResult Run(const DataLoaderConfig& config, uint64_t budget, double seconds) {
  int fds[2];
  if (pipe(fds) != 0) Die("pipe failed");
  const pid_t child = fork();
  if (child < 0) Die("fork failed");
  if (child == 0) {
    close(fds[0]);
    RunChild(config, budget, seconds, fds[1]);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die(absl::StrCat("the run with budget ", budget, " failed"));
  }
  RunResult result;
  char lowered[4096] = {0};
  std::sscanf(text.c_str(), "%lu %lu %lu %lu %4095[^\n]", &result.before,
              &result.peak, &result.planned, &result.batches, lowered);
  result.lowered = lowered;
  return result;
}

int Main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value of " + flag);
      return argv[++i];
    };
    if (flag == "--seconds") {
      options.seconds = std::stod(value());
    } else if (flag == "--levels") {
      options.levels = std::max(2, std::stoi(value()));
    } else if (flag == "--workload") {
      options.workload = value();
    } else if (flag == "--dir") {
      options.dir = value();
    } else {
      Die("unknown flag " + flag);
    }
  }
  if (options.dir.empty()) {
    options.dir = absl::StrCat("/tmp/sluice_memory_budget_", getpid());
  }
  WriteData(options.dir);
  for (const Workload& workload : Workloads(options)) {
    const MemoryBudgetMetricsProto model = Model(workload.config);
    std::printf(
        "%s: default settings model %s, minimum %s; %.0f s per budget\n",
        workload.name.c_str(), FormatBytes(model.configured_bytes()).c_str(),
        FormatBytes(model.minimum_bytes()).c_str(), options.seconds);
    std::printf("%12s %12s %12s %12s %8s %8s  %s\n", "budget", "planned",
                "rss_before", "peak_added", "ratio", "batches", "lowered");
    std::string json =
        absl::StrCat("{\"workload\":\"", workload.name, "\",\"runs\":[");
    for (int level = 0; level < options.levels; ++level) {
      const uint64_t budget =
          model.minimum_bytes() +
          (model.configured_bytes() - model.minimum_bytes()) * level /
              (options.levels - 1);
      const RunResult run = Run(workload.config, budget, options.seconds);
      const uint64_t added = run.peak > run.before ? run.peak - run.before : 0;
      const double ratio =
          static_cast<double>(added) / static_cast<double>(budget);
      std::printf("%12s %12s %12s %12s %8.3f %8lu  %s\n",
                  FormatBytes(budget).c_str(), FormatBytes(run.planned).c_str(),
                  FormatBytes(run.before).c_str(), FormatBytes(added).c_str(),
                  ratio, static_cast<unsigned long>(run.batches),
                  run.lowered.empty() ? "-" : run.lowered.c_str());
      std::fflush(stdout);
      absl::StrAppend(&json, level == 0 ? "" : ",", "{\"budget\":", budget,
                      ",\"planned\":", run.planned,
                      ",\"rss_before\":", run.before, ",\"peak\":", run.peak,
                      ",\"ratio\":", ratio, ",\"batches\":", run.batches, "}");
    }
    std::printf("JSON %s]}\n", json.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
