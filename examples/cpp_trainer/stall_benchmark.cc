// trainer_stall_benchmark: how much a trainer fed live by sluice loses
// against the same trainer fed from batches preloaded in memory.
//
//   trainer_stall_benchmark --workload lc0 --data DIR [--rounds 5]
//       [--timed-steps 20] [--warmup-steps 3] [--alone-seconds 4]
//       [any cpp_trainer flag: --batch-size, --loader-threads,
//        --torch-threads, ...]
//
// Each round runs, in turn: the trainer fed live by a fresh loader
// (warm-up steps first, while its reservoir fills; then the timed steps),
// the trainer fed from preloaded batches (taken from the same pipeline
// before the rounds; the upper bound), and the loader alone, taking batches
// as fast as it makes them. Per round it prints steps/s live and preloaded
// and their ratio, the share of wall time the live trainer waited for a
// batch, the loader's CPU seconds per wall second and per batch (live and
// alone), and the rows/s each side can do; then the medians, which side
// limits, and a JSON line (prefixed "JSON ").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "batch_feed.h"
#include "flags.h"
#include "pipeline_config.h"
#include "sluice/sluice.h"
#include "stop_signal.h"
#include "thread_cpu.h"
#include "torch/torch.h"
#include "train_step.h"
#include "workload.h"

namespace trainer {
namespace {

using Clock = std::chrono::steady_clock;

// The benchmark's own flags (the rest are cpp_trainer's).
struct BenchFlags {
  int rounds = 5;
  int timed_steps = 20;
  int warmup_steps = 3;
  double alone_seconds = 4;
};

// What one phase measured over its timed part.
struct Phase {
  double seconds = 0;
  int64_t steps = 0;  // training steps, or batches taken (loader alone)
  int64_t rows = 0;
  double wait_seconds = 0;
  double loader_cpu_seconds = 0;

  double steps_per_second() const { return steps / seconds; }
  double rows_per_second() const { return rows / seconds; }
  double loader_cpu_per_second() const { return loader_cpu_seconds / seconds; }
  double loader_cpu_per_batch() const { return loader_cpu_seconds / steps; }
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "trainer_stall_benchmark: %s\n", message.c_str());
  std::exit(1);
}

sluice::Batch NextOrDie(BatchFeed& feed) {
  std::optional<sluice::Batch> batch = feed.Next();
  if (!batch.has_value()) Die("the training pipeline ended or was stopped");
  return std::move(*batch);
}

// Splits argv into the benchmark's flags and the trainer's.
BenchFlags TakeBenchFlags(int argc, char** argv, std::vector<char*>& rest) {
  BenchFlags bench;
  rest.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Die(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--rounds") {
      bench.rounds = std::max(1, std::atoi(value()));
    } else if (arg == "--timed-steps") {
      bench.timed_steps = std::max(1, std::atoi(value()));
    } else if (arg == "--warmup-steps") {
      bench.warmup_steps = std::max(0, std::atoi(value()));
    } else if (arg == "--alone-seconds") {
      bench.alone_seconds = std::max(0.5, std::atof(value()));
    } else {
      rest.push_back(argv[i]);
    }
  }
  return bench;
}

// The trainer fed live by a fresh loader.
Phase Live(const TrainerFlags& flags, const BenchFlags& bench,
           Workload& workload, torch::optim::Optimizer& optimizer) {
  sluice::Loader loader(TrainingPipeline(flags));
  loader.Start();
  BatchFeed feed(loader);
  for (int i = 0; i < bench.warmup_steps; ++i) {
    TrainStep(workload, optimizer, NextOrDie(feed));
  }
  Phase phase;
  const double cpu = ThreadCpuSeconds("sluice-w");
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < bench.timed_steps; ++i) {
    const sluice::Batch batch = NextOrDie(feed);
    phase.wait_seconds += feed.last_wait_seconds();
    phase.rows += TrainStep(workload, optimizer, batch).rows;
  }
  phase.seconds = Since(start);
  phase.loader_cpu_seconds = ThreadCpuSeconds("sluice-w") - cpu;
  phase.steps = bench.timed_steps;
  loader.Stop();
  return phase;
}

// The trainer fed from batches in memory.
Phase Preloaded(const std::vector<sluice::Batch>& batches,
                const BenchFlags& bench, Workload& workload,
                torch::optim::Optimizer& optimizer) {
  for (int i = 0; i < bench.warmup_steps; ++i) {
    TrainStep(workload, optimizer, batches[i % batches.size()]);
  }
  Phase phase;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < bench.timed_steps; ++i) {
    phase.rows += TrainStep(workload, optimizer,
                            batches[(bench.warmup_steps + i) % batches.size()])
                      .rows;
  }
  phase.seconds = Since(start);
  phase.steps = bench.timed_steps;
  return phase;
}

// The loader alone: batches taken as fast as it makes them, dropped.
Phase Alone(const TrainerFlags& flags, const BenchFlags& bench) {
  sluice::Loader loader(TrainingPipeline(flags));
  loader.Start();
  BatchFeed feed(loader);
  for (int i = 0; i < bench.warmup_steps; ++i) NextOrDie(feed);
  Phase phase;
  const double cpu = ThreadCpuSeconds("sluice-w");
  const Clock::time_point start = Clock::now();
  while (Since(start) < bench.alone_seconds) {
    phase.rows += NextOrDie(feed).size();
    ++phase.steps;
  }
  phase.seconds = Since(start);
  phase.loader_cpu_seconds = ThreadCpuSeconds("sluice-w") - cpu;
  loader.Stop();
  return phase;
}

int Run(const TrainerFlags& flags, const BenchFlags& bench) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  const int loader_threads =
      flags.loader_threads == 0 ? cores : flags.loader_threads;
  const int torch_threads = flags.torch_threads > 0
                                ? flags.torch_threads
                                : std::max(1, cores - loader_threads);
  torch::set_num_threads(torch_threads);
  torch::manual_seed(flags.seed);

  // The preloaded batches: as many as a live phase takes, from the same
  // pipeline (the same ones in --deterministic mode).
  std::vector<sluice::Batch> batches;
  {
    sluice::Loader loader(TrainingPipeline(flags));
    loader.Start();
    BatchFeed feed(loader);
    const int count = bench.warmup_steps + bench.timed_steps;
    for (int i = 0; i < count; ++i) batches.push_back(NextOrDie(feed));
    loader.Stop();
  }
  int64_t classes = 0;
  if (flags.workload == WorkloadKind::kAudio) {
    classes = flags.classes;
    for (const sluice::Batch& batch : batches) {
      const int64_t* labels = batch.tensor("label").data_as<int64_t>();
      for (size_t i = 0; i < batch.size(); ++i) {
        classes = std::max(classes, labels[i] + 1);
      }
    }
  }
  std::unique_ptr<Workload> workload = MakeWorkload(flags, classes);
  std::unique_ptr<torch::optim::Optimizer> optimizer =
      MakeOptimizer(flags, workload->model());
  const char* unit = workload->unit();

  std::printf(
      "%s, batch %lld, %d torch threads, %d loader threads, %d cores; %d "
      "rounds of %d timed steps (after %d warm-up steps), loader alone %.0f "
      "s\n",
      workload->settings().c_str(), static_cast<long long>(flags.batch_size),
      torch_threads, loader_threads, cores, bench.rounds, bench.timed_steps,
      bench.warmup_steps, bench.alone_seconds);
  std::printf(
      "round  live st/s  preload st/s  ratio  wait %%  loader cpu/s  "
      "cpu/batch live/alone  alone %s/s  trainer %s/s\n",
      unit, unit);
  std::vector<double> ratios, waits, live_cpu, cpu_per_batch_ratios,
      alone_rates, demand_rates, live_rates, live_rates_of_alone;
  for (int round = 1; round <= bench.rounds; ++round) {
    const Phase live = Live(flags, bench, *workload, *optimizer);
    const Phase preloaded = Preloaded(batches, bench, *workload, *optimizer);
    const Phase alone = Alone(flags, bench);
    ratios.push_back(live.steps_per_second() / preloaded.steps_per_second());
    waits.push_back(live.wait_seconds / live.seconds);
    live_cpu.push_back(live.loader_cpu_per_second());
    cpu_per_batch_ratios.push_back(live.loader_cpu_per_batch() /
                                   alone.loader_cpu_per_batch());
    alone_rates.push_back(alone.rows_per_second());
    demand_rates.push_back(preloaded.rows_per_second());
    live_rates.push_back(live.rows_per_second());
    live_rates_of_alone.push_back(live.rows_per_second() /
                                  alone.rows_per_second());
    std::printf(
        "%5d  %9.2f  %12.2f  %5.3f  %6.2f  %12.3f  %20.2f  %10.0f  %10.0f\n",
        round, live.steps_per_second(), preloaded.steps_per_second(),
        ratios.back(), 100 * waits.back(), live_cpu.back(),
        cpu_per_batch_ratios.back(), alone_rates.back(), demand_rates.back());
    std::fflush(stdout);
  }
  const double ratio = Median(ratios);
  const double wait = Median(waits);
  const double alone = Median(alone_rates);
  const double demand = Median(demand_rates);
  const bool loader_limits = alone < demand;
  std::printf(
      "median: live/preloaded %.3f (range %.3f-%.3f), waiting %.2f %% of "
      "wall time, loader %.3f CPU s per wall s (%.2fx its CPU per batch "
      "alone)\n",
      ratio, *std::min_element(ratios.begin(), ratios.end()),
      *std::max_element(ratios.begin(), ratios.end()), 100 * wait,
      Median(live_cpu), Median(cpu_per_batch_ratios));
  std::printf(
      "the %s limits: loader alone %.0f %s/s, trainer on preloaded batches "
      "%.0f %s/s; live %.0f %s/s = %.1f %% of the loader alone\n",
      loader_limits ? "loader" : "trainer", alone, unit, demand, unit,
      Median(live_rates), unit, 100 * Median(live_rates_of_alone));
  std::printf(
      "JSON {\"workload\":\"%s\",\"batch_size\":%lld,\"torch_threads\":%d,"
      "\"loader_threads\":%d,\"rounds\":%d,\"live_over_preloaded_median\":%."
      "4f,\"wait_share_median\":%.4f,\"loader_cpu_per_second_median\":%.4f,"
      "\"cpu_per_batch_live_over_alone_median\":%.3f,\"loader_alone_rows_per_"
      "second\":%.1f,\"trainer_preloaded_rows_per_second\":%.1f,\"live_rows_"
      "per_second\":%.1f,\"live_over_alone_median\":%.4f,\"limit\":\"%s\"}\n",
      WorkloadName(flags.workload), static_cast<long long>(flags.batch_size),
      torch_threads, loader_threads, bench.rounds, ratio, wait,
      Median(live_cpu), Median(cpu_per_batch_ratios), alone, demand,
      Median(live_rates), Median(live_rates_of_alone),
      loader_limits ? "loader" : "trainer");
  return 0;
}

}  // namespace
}  // namespace trainer

int main(int argc, char** argv) {
  using namespace trainer;
  std::vector<char*> rest;
  const BenchFlags bench = TakeBenchFlags(argc, argv, rest);
  TrainerFlags flags;
  try {
    flags = ParseFlags(static_cast<int>(rest.size()), rest.data());
  } catch (const FlagError& error) {
    Die(error.what());
  }
  if (flags.help) {
    std::puts(
        "usage: trainer_stall_benchmark --workload lc0|audio --data DIR "
        "[--rounds 5] [--timed-steps 20] [--warmup-steps 3] "
        "[--alone-seconds 4] [cpp_trainer flags]");
    return 0;
  }
  StopSignal::Install();
  try {
    return Run(flags, bench);
  } catch (const std::exception& error) {
    Die(error.what());
  }
}
