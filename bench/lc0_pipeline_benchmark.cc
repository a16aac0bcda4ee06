// End-to-end benchmark of the default lc0 training pipeline
// (proto/examples/lc0_train.textproto) on generated tar data, against the
// machine's ceiling for the same work.
//
//   build/bench/lc0_pipeline_benchmark [--games N] [--batches N]
//                                      [--cache-dir DIR] [--threads N]
//                                      [--ceiling-batches N]
//                                      [--deterministic 1] [--resumable 1]
//                                      [--trace FILE]
//
// Data: N games (default 2000) written once by the data generator into
// DIR (default /tmp/sluice_lc0_bench_<N>), 100 games per tar, then read once
// so the page cache is warm. For 1 and 2 worker threads it runs the
// pipeline (batch 1024) and reports the time to the first batch (min_fill
// frames in the reservoir), the warm-up time (until the reservoir is full:
// while it grows, part of the unpacked frames stay in it), positions/s and
// batches/s in steady state (after the warm-up), peak RSS and each stage's
// load, and how busy the workers were (process CPU time over wall time x
// threads; --threads N runs only N, e.g. under a profiler). The ceiling is the
// single-core rate of gunzip + split (up-conversion; V6 records are read in
// place, as the pipeline reads them) + tensor expansion over the same chunks
// with no pipeline around it, times the thread count. Its batch's pages are
// touched before the clock starts, as the pipeline's pooled batch buffers
// pay no page faults in steady state. It is the best of three passes,
// measured before the runs and again after each one: a slow spell of a
// shared machine must not flatter the ratio. Beside it, the measured
// parallel ceiling: that same loop run by N threads at once (each over every
// chunk), which shows how far this machine's cores scale at all (shared
// caches, memory bandwidth, vCPUs sharing a physical core). And
// the stages' work with no engine: the ceiling's steps plus validation,
// packing into a reservoir-sized window and expanding from it in random
// order, in one plain loop (column "/work": the pipeline against it times
// the thread count), which splits the gap to the ceiling into what the
// stages' own work costs and what the engine costs; it too is measured on N
// threads at once, which bounds the ratio any engine could reach here.
// The parallel loops' threads are placed as the pipeline's workers are
// (the config's worker_placement, AUTO: each pinned to a CPU of its own
// where the machine allows, engine/worker_placement.h), so that both sides
// run on the same CPUs: the host may put two vCPUs on cores that share a
// cache or on cores that do not, and threads the scheduler moves between
// them would make the bound, not the pipeline, pay for it.
// Prints a table, then one JSON line (prefixed "JSON ").
//
// --ceiling-batches N (default 1) has the ceiling loops expand into N
// batches in turn instead of reusing one. The pipeline hands every batch on
// and keeps about 4 of them (37 MB each) in use; where the last-level cache
// is large, one reused batch stays in it and 4 in turn do not, so N = 4
// shows what that difference alone is worth on this machine.
//
// --deterministic 1 runs the pipeline in deterministic mode, --resumable 1
// with `resumable: true` (checkpoints without deterministic mode; both in
// docs/guarantees.md); compare them with a run without, interleaved.
//
// --trace FILE records a trace of each run (DataLoaderConfig.trace, the
// defaults otherwise) into FILE, written when the run stops, after its
// figures are taken; with several thread counts the last run's is kept.
// Compare with a run without, interleaved, for what tracing costs.
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/lc0_bench_support.h"
#include "engine/data_loader.h"
#include "engine/worker_placement.h"
#include "io/gzip.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/record_validator.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/tensor_expansion.h"
#include "stages/stage_factory.h"

namespace sluice::lc0 {
namespace {

using bench::Clock;
using bench::Die;
using bench::EnsureData;
using bench::ForEachRecord;
using bench::kBatchSize;
using bench::PrefaultedBatch;
using bench::ReadChunks;
using bench::ReservoirSize;
using bench::Seconds;
using bench::SetProgramName;
using bench::StageWorker;
using bench::TrainConfig;

struct Ceiling {
  double positions_per_second = 0;
  uint64_t positions = 0;
};

// Single core: gunzip + split + expand every position of every chunk into
// `batches` in turn (reused), no pipeline; one pass.
Ceiling MeasureCeilingOnce(const std::vector<std::string>& chunks,
                           std::vector<TensorBatch>& batches) {
  absl::StatusOr<TensorExpander> expander = TensorExpander::Create(1);
  if (!expander.ok()) Die("cannot set up the ceiling run");
  std::string raw;
  V6TrainingRecord scratch;
  Ceiling ceiling;
  size_t slot = 0;
  size_t batch = 0;
  const auto start = Clock::now();
  ceiling.positions = ForEachRecord(
      chunks, raw, &scratch,
      [&](const V6TrainingRecord& record, RecordVersion /*version*/) {
        expander->Expand(record, &batches[batch], slot);
        if (++slot == kBatchSize) {
          slot = 0;
          batch = (batch + 1) % batches.size();
        }
      });
  ceiling.positions_per_second =
      ceiling.positions / Seconds(Clock::now() - start);
  return ceiling;
}

// The CPUs the pipeline's `threads` workers are pinned to (empty: they
// float); the parallel bound loops pin theirs alike.
std::vector<int> WorkerCpus(unsigned threads) {
  return PinnedCpus(WorkerPlacement::kAuto, threads, AllowedCpus(),
                    ProcessNiceness());
}

// Pins the calling thread, the t-th of a parallel loop, where the pipeline's
// t-th worker would be.
void PlaceLikeWorker(unsigned t, const std::vector<int>& cpus) {
  if (!cpus.empty() && !PinCurrentThread(cpus[t])) {
    std::fprintf(stderr, "lc0_pipeline_benchmark: cannot pin to CPU %d\n",
                 cpus[t]);
    std::exit(1);
  }
}

// `threads` copies of MeasureCeilingOnce at once, each with its own
// `batches_in_turn` batches, started together: all their positions over the
// slowest one's time. Threads placed as the pipeline's workers.
Ceiling MeasureParallelCeilingOnce(const std::vector<std::string>& chunks,
                                   unsigned threads, int batches_in_turn) {
  std::vector<Ceiling> each(threads);
  std::latch ready(threads);
  const std::vector<int> cpus = WorkerCpus(threads);
  {
    std::vector<std::jthread> workers;
    for (unsigned t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        PlaceLikeWorker(t, cpus);
        std::vector<TensorBatch> batches;
        for (int b = 0; b < batches_in_turn; ++b) {
          batches.push_back(PrefaultedBatch());
        }
        ready.arrive_and_wait();
        each[t] = MeasureCeilingOnce(chunks, batches);
      });
    }
  }
  Ceiling total;
  double slowest = 0;
  for (const Ceiling& one : each) {
    total.positions += one.positions;
    slowest = std::max(slowest, one.positions / one.positions_per_second);
  }
  total.positions_per_second = total.positions / slowest;
  return total;
}

// The fastest of three passes: the ceiling is not lowered by a slow pass.
Ceiling MeasureCeiling(const std::vector<std::string>& chunks, unsigned threads,
                       int batches_in_turn) {
  Ceiling best;
  for (int pass = 0; pass < 3; ++pass) {
    const Ceiling ceiling =
        MeasureParallelCeilingOnce(chunks, threads, batches_in_turn);
    if (ceiling.positions_per_second > best.positions_per_second) {
      best = ceiling;
    }
  }
  return best;
}

// The stages' work with no engine (StageWorker): the ceiling's rate over
// this one is what the stages' own work costs (validation, packing, random
// access); this one's over the pipeline's is what the engine costs. The best
// of three passes.
double MeasureStageWork(const std::vector<std::string>& chunks,
                        size_t window_frames) {
  double best = 0;
  {
    StageWorker worker(window_frames);
    for (int pass = 0; pass < 3; ++pass) {
      size_t next = 0;
      const auto start = Clock::now();
      const uint64_t positions = worker.Run([&]() -> const std::string* {
        return next < chunks.size() ? &chunks[next++] : nullptr;
      });
      best = std::max(best, positions / Seconds(Clock::now() - start));
    }
  }
  // The freed window stays in malloc's free lists; give it back, so that it
  // does not count in the next run's peak RSS.
  ::malloc_trim(0);
  return best;
}

// `threads` copies of MeasureStageWork run at once, each with its own
// window: the sum of their rates. Over `threads` x the ceiling, this is the
// ratio a pipeline whose engine cost nothing would reach on this machine.
// Threads placed as the pipeline's workers.
double MeasureParallelStageWork(const std::vector<std::string>& chunks,
                                size_t window_frames, unsigned threads) {
  std::vector<double> each(threads);
  const std::vector<int> cpus = WorkerCpus(threads);
  {
    std::vector<std::jthread> workers;
    for (unsigned t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        PlaceLikeWorker(t, cpus);
        each[t] = MeasureStageWork(chunks, window_frames);
      });
    }
  }
  double total = 0;
  for (const double rate : each) total += rate;
  return total;
}

// Peak resident set since the last reset, in MiB.
double PeakRssMib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024;
  }
  return 0;
}

// User plus system CPU seconds of the whole process so far.
double ProcessCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

struct RunResult {
  unsigned threads = 0;
  double first_batch_seconds = 0;
  double warm_up_seconds = 0;  // until the reservoir is full
  double positions_per_second = 0;
  double batches_per_second = 0;
  // Process CPU time in steady state over (wall time x threads): below 1,
  // the workers were idle part of the time.
  double cpu_busy = 0;
  double peak_rss_mib = 0;
  std::vector<std::pair<std::string, double>> loads;
};

// The sampler's fill and capacity in the latest metrics snapshot.
std::pair<uint64_t, uint64_t> ReservoirFill(DataLoader& loader) {
  const DataLoaderMetricsProto metrics = loader.GetMetrics();
  for (const StageMetricProto& stage : metrics.stage_metrics()) {
    if (stage.has_shuffling_frame_sampler()) {
      return {stage.shuffling_frame_sampler().fill(),
              stage.shuffling_frame_sampler().capacity()};
    }
  }
  return {0, 0};
}

RunResult RunPipeline(const std::string& dir, unsigned threads, int batches,
                      bool deterministic, bool resumable,
                      const std::string& trace) {
  ResetPeakRss();
  RunResult result;
  result.threads = threads;
  DataLoader loader(CreateStage);
  DataLoaderConfig config = TrainConfig(dir, threads, deterministic);
  config.set_resumable(resumable);
  if (!trace.empty()) config.mutable_trace()->set_file(trace);
  loader.Configure(config);
  const auto start = Clock::now();
  loader.Start();
  if (!loader.GetNext<TypedBatch>()) Die("the pipeline ended");
  result.first_batch_seconds = Seconds(Clock::now() - start);
  // Warm-up: output starts at min_fill, and the reservoir then grows (every
  // frame the consumer does not take is kept) until it is full. Steady
  // state starts there (or after kMaxWarmUp, for a reservoir that stays
  // below its size because the consumer keeps up).
  constexpr auto kMaxWarmUp = std::chrono::seconds(30);
  for (int i = 1;; ++i) {
    if (!loader.GetNext<TypedBatch>()) Die("the pipeline ended");
    if (Clock::now() - start > kMaxWarmUp) break;
    if (i % 16 != 0) continue;
    const auto [fill, capacity] = ReservoirFill(loader);
    if (capacity > 0 && fill >= capacity) break;
  }
  const auto steady = Clock::now();
  const double steady_cpu = ProcessCpuSeconds();
  result.warm_up_seconds = Seconds(steady - start);
  for (int i = 0; i < batches; ++i) {
    if (!loader.GetNext<TypedBatch>()) Die("the pipeline ended");
  }
  const double seconds = Seconds(Clock::now() - steady);
  result.cpu_busy = (ProcessCpuSeconds() - steady_cpu) / (seconds * threads);
  result.batches_per_second = batches / seconds;
  result.positions_per_second = result.batches_per_second * kBatchSize;
  loader.Stop();
  result.peak_rss_mib = PeakRssMib();
  const DataLoaderMetricsProto metrics = loader.GetMetrics();
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    result.loads.emplace_back(stage.name(), stage.load().load());
  }
  return result;
}

int Main(int argc, char** argv) {
  SetProgramName("lc0_pipeline_benchmark");
  int games = 2000;
  int batches = 300;
  std::vector<unsigned> thread_counts = {1, 2};
  int ceiling_batches = 1;
  bool deterministic = false;
  bool resumable = false;
  std::string dir;
  std::string trace;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--games") {
      games = std::atoi(argv[i + 1]);
    } else if (flag == "--batches") {
      batches = std::atoi(argv[i + 1]);
    } else if (flag == "--cache-dir") {
      dir = argv[i + 1];
    } else if (flag == "--threads") {
      thread_counts = {static_cast<unsigned>(std::atoi(argv[i + 1]))};
    } else if (flag == "--ceiling-batches") {
      ceiling_batches = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--deterministic") {
      deterministic = std::atoi(argv[i + 1]) != 0;
    } else if (flag == "--resumable") {
      resumable = std::atoi(argv[i + 1]) != 0;
    } else if (flag == "--trace") {
      trace = argv[i + 1];
    } else {
      Die("unknown flag " + flag);
    }
  }
  if (dir.empty()) dir = "/tmp/sluice_lc0_bench_" + std::to_string(games);
  const std::vector<std::string> tars = EnsureData(dir, games);
  const std::vector<std::string> chunks = ReadChunks(tars);
  // The ceilings are measured before the runs and again after each run,
  // and the best figure counts: a slow spell of a shared machine during
  // one measurement must not flatter the ratios.
  Ceiling ceiling;
  std::vector<double> measured(thread_counts.size());
  std::vector<double> measured_work(thread_counts.size());
  const size_t reservoir_frames = ReservoirSize(TrainConfig(dir, 1));
  double stage_work = 0;
  auto measure_ceilings = [&] {
    const Ceiling now = MeasureCeiling(chunks, 1, ceiling_batches);
    if (now.positions_per_second > ceiling.positions_per_second) {
      ceiling = now;
    }
    stage_work =
        std::max(stage_work, MeasureStageWork(chunks, reservoir_frames));
    for (size_t i = 0; i < thread_counts.size(); ++i) {
      if (thread_counts[i] == 1) continue;
      measured[i] = std::max(
          measured[i], MeasureCeiling(chunks, thread_counts[i], ceiling_batches)
                           .positions_per_second);
      measured_work[i] = std::max(
          measured_work[i],
          MeasureParallelStageWork(chunks, reservoir_frames, thread_counts[i]));
    }
  };
  measure_ceilings();
  std::printf("data: %zu chunks, %lu positions in %zu tars (%s)\n",
              chunks.size(), static_cast<unsigned long>(ceiling.positions),
              tars.size(), dir.c_str());
  std::vector<RunResult> runs;
  for (unsigned threads : thread_counts) {
    runs.push_back(
        RunPipeline(dir, threads, batches, deterministic, resumable, trace));
    measure_ceilings();
  }
  std::printf(
      "ceiling, 1 core (gunzip + split + expand into %d batch(es) in turn): "
      "%.0f positions/s\n",
      ceiling_batches, ceiling.positions_per_second);
  std::printf(
      "stages' work with no engine, 1 core (also validate, pack into a "
      "%zu-frame window, expand it in random order): %.0f positions/s (%.0f%% "
      "of the ceiling)\n",
      reservoir_frames, stage_work,
      100 * stage_work / ceiling.positions_per_second);
  for (size_t i = 0; i < thread_counts.size(); ++i) {
    if (thread_counts[i] == 1) measured[i] = ceiling.positions_per_second;
    std::printf(
        "ceiling measured with %u thread(s) at once: %.0f positions/s "
        "(%.2fx one core)\n",
        thread_counts[i], measured[i],
        measured[i] / ceiling.positions_per_second);
    if (thread_counts[i] == 1) continue;
    std::printf(
        "stages' work with no engine measured with %u threads at once: %.0f "
        "positions/s (%.2fx one core; %.0f%% of %ux the ceiling: the most a "
        "pipeline whose engine cost nothing would reach)\n",
        thread_counts[i], measured_work[i], measured_work[i] / stage_work,
        100 * measured_work[i] /
            (thread_counts[i] * ceiling.positions_per_second),
        thread_counts[i]);
  }
  std::printf("\n%-7s %12s %10s %12s %9s %12s %7s %9s %6s %5s %9s  %s\n",
              "threads", "positions/s", "batches/s", "1st batch s", "warm-up s",
              "ceiling", "ratio", "/measured", "/work", "cpu", "peak MiB",
              "stage load");
  if (deterministic) std::printf("(deterministic mode)\n");
  if (resumable) std::printf("(resumable: true)\n");
  if (!trace.empty()) std::printf("(traced into %s)\n", trace.c_str());
  std::string json = "{\"benchmark\":\"lc0_pipeline\",\"batch_size\":1024";
  json +=
      std::string(",\"deterministic\":") + (deterministic ? "true" : "false");
  json += std::string(",\"resumable\":") + (resumable ? "true" : "false");
  json += std::string(",\"traced\":") + (trace.empty() ? "false" : "true");
  json += ",\"ceiling_batches\":" + std::to_string(ceiling_batches);
  json += ",\"ceiling_1core_positions_per_second\":" +
          std::to_string(ceiling.positions_per_second) +
          ",\"stage_work_1core_positions_per_second\":" +
          std::to_string(stage_work);
  for (size_t i = 0; i < thread_counts.size(); ++i) {
    const unsigned threads = thread_counts[i];
    const RunResult& run = runs[i];
    const double scaled = ceiling.positions_per_second * threads;
    const double ratio = run.positions_per_second / scaled;
    const double measured_ratio = run.positions_per_second / measured[i];
    const double work_ratio = run.positions_per_second / (stage_work * threads);
    std::string loads;
    for (const auto& [name, load] : run.loads) {
      loads += name + "=" + std::to_string(load).substr(0, 4) + " ";
    }
    std::printf(
        "%-7u %12.0f %10.1f %12.2f %9.2f %12.0f %6.0f%% %8.0f%% %5.0f%% "
        "%4.0f%% %9.0f  %s\n",
        threads, run.positions_per_second, run.batches_per_second,
        run.first_batch_seconds, run.warm_up_seconds, scaled, 100 * ratio,
        100 * measured_ratio, 100 * work_ratio, 100 * run.cpu_busy,
        run.peak_rss_mib, loads.c_str());
    const std::string key = ",\"t" + std::to_string(threads) + "_";
    json +=
        key +
        "positions_per_second\":" + std::to_string(run.positions_per_second) +
        key + "batches_per_second\":" + std::to_string(run.batches_per_second) +
        key +
        "first_batch_seconds\":" + std::to_string(run.first_batch_seconds) +
        key + "warm_up_seconds\":" + std::to_string(run.warm_up_seconds) + key +
        "cpu_busy\":" + std::to_string(run.cpu_busy) + key +
        "peak_rss_mib\":" + std::to_string(run.peak_rss_mib) + key +
        "ceiling_ratio\":" + std::to_string(ratio) + key +
        "measured_ceiling_positions_per_second\":" +
        std::to_string(measured[i]) + key +
        "measured_ceiling_ratio\":" + std::to_string(measured_ratio) + key +
        "stage_work_ratio\":" + std::to_string(work_ratio);
    if (threads > 1) {
      json += key + "measured_stage_work_positions_per_second\":" +
              std::to_string(measured_work[i]);
    }
    for (const auto& [name, load] : run.loads) {
      json += key + "load_" + name + "\":" + std::to_string(load);
    }
  }
  std::printf("JSON %s}\n", json.c_str());
  return 0;
}

}  // namespace
}  // namespace sluice::lc0

int main(int argc, char** argv) { return sluice::lc0::Main(argc, argv); }
