// Soak run of the default lc0 training pipeline (stages/lc0/
// default_pipeline.h) while a separate writer process keeps adding files:
// throughput and RSS over time, every skip counter, and a verdict.
//
//   build/bench/soak_benchmark [--seconds N] [--reservoir N] [--min-fill N]
//       [--initial-games N] [--writer-games N] [--writer-interval S]
//       [--single-pass-check] [--dir DIR]
//
// Data: --initial-games (default 300) generated games, 10 per tar, in a
// fresh directory under /tmp (or DIR, which must be empty or missing);
// during the run a forked child writes another tar of --writer-games
// (default 10) new games every --writer-interval seconds (default 2). The
// reservoir defaults to 20000 frames (min fill 5000) instead of the
// production 200000 so the run fits a small CI machine.
// Exits 1 on:
// - a leak trend: RSS at the end, less what the batch buffers and the
//   reservoir grew by since the reference point, more than 5 % above RSS at
//   the reference point (2 minutes in, or a third of the run when that is
//   earlier). Both are bounded but may grow late, so their growth is left
//   out: the tensor generator's pool of batch buffers grows by a whole
//   batch (37 MB at 1024 positions) whenever the generator first gets
//   further ahead of the consumer, and the sampler's reservoir grows from
//   min_fill towards its size (about 1.2 KB a frame, 18 MB from 5000 to
//   20000) whenever the consumer is the slower side for a while;
// - a hang: no batch for 5 s;
// - a pipeline error;
// - with --single-pass-check, a lost or duplicated chunk: after the soak,
//   the eval pipeline over a fixed copy of the initial games must yield
//   every generated position once (total positions equal, one distinct game
//   id per generated game).
// Prints a table (one row per reporting interval), then one JSON line
// (prefixed "JSON ").
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/data_loader.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/stage_factory.h"

namespace sluice::lc0 {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kGamesPerTar = 10;
constexpr double kHangSeconds = 5;
constexpr double kLeakRatio = 1.05;

struct Flags {
  double seconds = 600;
  uint64_t reservoir = 20000;
  uint64_t min_fill = 5000;
  int initial_games = 300;
  int writer_games = kGamesPerTar;
  double writer_interval = 2;
  bool single_pass_check = false;
  std::string dir;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "soak_benchmark: %s\n", message.c_str());
  std::exit(2);
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--single-pass-check") {
      flags.single_pass_check = true;
      continue;
    }
    if (i + 1 >= argc) Die("missing value for " + flag);
    const char* value = argv[++i];
    if (flag == "--seconds") {
      flags.seconds = std::atof(value);
    } else if (flag == "--reservoir") {
      flags.reservoir = std::strtoull(value, nullptr, 10);
    } else if (flag == "--min-fill") {
      flags.min_fill = std::strtoull(value, nullptr, 10);
    } else if (flag == "--initial-games") {
      flags.initial_games = std::atoi(value);
    } else if (flag == "--writer-games") {
      flags.writer_games = std::atoi(value);
    } else if (flag == "--writer-interval") {
      flags.writer_interval = std::atof(value);
    } else if (flag == "--dir") {
      flags.dir = value;
    } else {
      Die("unknown flag " + flag);
    }
  }
  if (flags.seconds <= 0 || flags.initial_games < kGamesPerTar ||
      flags.writer_games < 1 || flags.writer_interval <= 0) {
    Die("bad flag value");
  }
  return flags;
}

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double RssMib() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident * sysconf(_SC_PAGESIZE)) / (1 << 20);
}

// RSS now and the bounded parts of it that may grow late, as `metrics`
// report them: the tensor generators' batch buffers and the samplers'
// reservoirs; in MiB.
struct Memory {
  double rss_mib = 0;
  double batch_mib = 0;
  double reservoir_mib = 0;
};
Memory MemoryNow(const DataLoaderMetricsProto& metrics) {
  uint64_t batch_bytes = 0, reservoir_bytes = 0;
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    batch_bytes += stage.tensor_generator().batch_buffer_bytes();
    reservoir_bytes += stage.shuffling_frame_sampler().resident_bytes();
  }
  constexpr double kMib = 1 << 20;
  return {.rss_mib = RssMib(),
          .batch_mib = batch_bytes / kMib,
          .reservoir_mib = reservoir_bytes / kMib};
}

GeneratedFiles Write(const std::string& dir, int first_game, int games) {
  absl::StatusOr<GeneratedFiles> files =
      WriteGames({.seed = 11, .version = 6, .input_format = 1},
                 {.mode = OutputMode::kTar,
                  .dir = dir,
                  .games = games,
                  .first_game = first_game,
                  .games_per_tar = kGamesPerTar});
  if (!files.ok()) Die(std::string(files.status().message()));
  return *files;
}

// The writer process: a tar of new games every interval until killed.
// Forked before any thread exists.
pid_t StartWriter(const Flags& flags, const std::string& dir) {
  const pid_t child = fork();
  if (child < 0) Die("fork failed");
  if (child > 0) return child;
  const int per_write =
      (flags.writer_games + kGamesPerTar - 1) / kGamesPerTar * kGamesPerTar;
  for (int next = flags.initial_games;; next += per_write) {
    std::this_thread::sleep_for(
        std::chrono::duration<double>(flags.writer_interval));
    Write(dir, next, per_write);
  }
}

// Skip counts of every stage, as "stage/reason" -> count.
std::map<std::string, uint64_t> SkipCounts(DataLoader& loader) {
  std::map<std::string, uint64_t> counts;
  const DataLoaderMetricsProto metrics = loader.GetMetrics();
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    for (const SkipCountProto& skip : stage.skipped()) {
      counts[stage.name() + "/" + skip.reason()] += skip.count();
    }
  }
  return counts;
}

// Runs the eval pipeline over `dir`; true if it yields exactly `positions`
// positions from exactly `games` distinct games.
bool SinglePassCheck(const std::string& dir, uint64_t games, uint64_t positions,
                     std::string* detail) {
  absl::StatusOr<DataLoaderConfig> config =
      MakePipeline({.directories = {dir}, .mode = PipelineMode::kEval});
  if (!config.ok()) Die(std::string(config.status().message()));
  DataLoader loader(CreateStage);
  loader.Configure(*config);
  loader.Start();
  uint64_t seen = 0;
  std::set<uint64_t> ids;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    seen += batch->size();
    ids.insert(batch->example_ids().begin(), batch->example_ids().end());
  }
  loader.Stop();
  *detail = "positions " + std::to_string(seen) + "/" +
            std::to_string(positions) + ", games " +
            std::to_string(ids.size()) + "/" + std::to_string(games);
  return seen == positions && ids.size() == games;
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  std::string dir = flags.dir;
  if (dir.empty()) {
    char pattern[] = "/tmp/sluice_soak_XXXXXX";
    if (mkdtemp(pattern) == nullptr) Die("mkdtemp failed");
    dir = pattern;
  }
  Write(dir + "/data", 0, flags.initial_games);
  // A fixed copy of the initial games for the single-pass check.
  GeneratedFiles fixed;
  if (flags.single_pass_check) {
    fixed = Write(dir + "/fixed", 0, flags.initial_games);
  }
  const pid_t writer = StartWriter(flags, dir + "/data");

  absl::StatusOr<DataLoaderConfig> config =
      MakePipeline({.directories = {dir + "/data"},
                    .reservoir_size = flags.reservoir,
                    .min_fill = flags.min_fill,
                    .worker_threads = 2});
  if (!config.ok()) Die(std::string(config.status().message()));
  DataLoader loader(CreateStage);
  loader.Configure(*config);
  loader.Start();

  const double report_every = std::min(10.0, flags.seconds / 6);
  const double reference_at = std::min(120.0, flags.seconds / 3);
  const Clock::time_point start = Clock::now();
  Clock::time_point last_report = start;
  std::optional<Memory> reference;
  double max_gap = 0;
  uint64_t positions = 0, batches = 0, interval_positions = 0;
  std::string failure;
  std::printf("%8s %10s %12s %9s %9s %9s %8s %8s %8s %6s\n", "time_s",
              "batches", "positions/s", "rss_mib", "batch_mib", "resv_mib",
              "files", "in_pool", "fill", "skips");
  std::string rss_series = "[", batch_series = "[", reservoir_series = "[",
              rate_series = "[";
  while (Seconds(Clock::now() - start) < flags.seconds) {
    const Clock::time_point asked = Clock::now();
    auto next = loader.pipeline().GetNextFor<TypedBatch>(
        "", std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::duration<double>(kHangSeconds)));
    if (!next.ok()) {
      failure = "pipeline error: " + std::string(next.status().message());
      break;
    }
    max_gap = std::max(max_gap, Seconds(Clock::now() - asked));
    if (next->kind != Channel<TypedBatch>::GetResult::Kind::kItem) {
      failure = "hang: no batch for 5 s";
      break;
    }
    ++batches;
    positions += next->item->size();
    interval_positions += next->item->size();
    const double now = Seconds(Clock::now() - start);
    if (!reference && now >= reference_at)
      reference = MemoryNow(loader.GetMetrics());
    if (Seconds(Clock::now() - last_report) >= report_every) {
      const double rate =
          interval_positions / Seconds(Clock::now() - last_report);
      const DataLoaderMetricsProto metrics = loader.GetMetrics();
      uint64_t files = 0, in_pool = 0, fill = 0, skips = 0;
      for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
        files += stage.file_path_provider().files_offered();
        in_pool += stage.shuffling_chunk_pool().chunks_in_pool();
        fill += stage.shuffling_frame_sampler().fill();
        for (const SkipCountProto& skip : stage.skipped()) {
          skips += skip.count();
        }
      }
      const Memory memory = MemoryNow(metrics);
      std::printf("%8.1f %10lu %12.0f %9.1f %9.1f %9.1f %8lu %8lu %8lu %6lu\n",
                  now, batches, rate, memory.rss_mib, memory.batch_mib,
                  memory.reservoir_mib, files, in_pool, fill, skips);
      std::fflush(stdout);
      rss_series +=
          (rss_series.size() > 1 ? "," : "") + std::to_string(memory.rss_mib);
      batch_series += (batch_series.size() > 1 ? "," : "") +
                      std::to_string(memory.batch_mib);
      reservoir_series += (reservoir_series.size() > 1 ? "," : "") +
                          std::to_string(memory.reservoir_mib);
      rate_series += (rate_series.size() > 1 ? "," : "") + std::to_string(rate);
      interval_positions = 0;
      last_report = Clock::now();
    }
  }
  const double elapsed = Seconds(Clock::now() - start);
  const Memory end = MemoryNow(loader.GetMetrics());
  kill(writer, SIGKILL);
  waitpid(writer, nullptr, 0);
  const std::map<std::string, uint64_t> skips = SkipCounts(loader);
  loader.Stop();
  const double rss_reference = reference ? reference->rss_mib : 0;
  const double rss_end =
      reference ? end.rss_mib - (end.batch_mib - reference->batch_mib) -
                      (end.reservoir_mib - reference->reservoir_mib)
                : end.rss_mib;
  if (failure.empty() && reference && rss_end > rss_reference * kLeakRatio) {
    failure = "leak trend: RSS " + std::to_string(rss_reference) + " -> " +
              std::to_string(rss_end) +
              " MiB (less what batch buffers and reservoir grew by)";
  }
  std::string single_pass = "skipped";
  if (failure.empty() && flags.single_pass_check) {
    if (!SinglePassCheck(dir + "/fixed", fixed.games, fixed.positions,
                         &single_pass)) {
      failure = "single pass lost or duplicated chunks: " + single_pass;
    }
  }
  std::printf("skips:");
  std::string skips_json = "{";
  for (const auto& [name, count] : skips) {
    std::printf(" %s=%lu", name.c_str(), count);
    skips_json += (skips_json.size() > 1 ? ",\"" : "\"") + name +
                  "\":" + std::to_string(count);
  }
  std::printf("%s\n", skips.empty() ? " none" : "");
  std::printf(
      "JSON {\"seconds\":%.1f,\"batches\":%lu,\"positions_per_second\":%.0f,"
      "\"max_batch_gap_seconds\":%.3f,"
      "\"rss_reference_mib\":%.1f,"
      "\"rss_end_less_growth_mib\":%.1f,\"rss_mib\":%s],"
      "\"batch_buffer_mib\":%s],\"reservoir_mib\":%s],"
      "\"positions_per_second_series\":%s],"
      "\"skips\":%s},\"single_pass\":\"%s\",\"failure\":\"%s\"}\n",
      elapsed, batches, positions / elapsed, max_gap, rss_reference, rss_end,
      rss_series.c_str(), batch_series.c_str(), reservoir_series.c_str(),
      rate_series.c_str(), skips_json.c_str(), single_pass.c_str(),
      failure.c_str());
  if (flags.dir.empty()) std::filesystem::remove_all(dir);
  if (!failure.empty()) {
    std::fprintf(stderr, "soak_benchmark: FAIL: %s\n", failure.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace sluice::lc0

int main(int argc, char** argv) { return sluice::lc0::Main(argc, argv); }
