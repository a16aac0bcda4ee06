// The lc0 training pipeline beside other work: how much of its no-engine
// bound it keeps when it shares the cores with a trainer or a noisy
// neighbour.
//
//   build/bench/contention_benchmark [--rounds N] [--threads N]
//                                    [--batches N] [--games N]
//                                    [--cases alone,duty30,duty60,stream]
//                                    [--deterministic 1]
//                                    [--placement auto|pinned|floating]
//
// Cases (each a co-runner started before and killed after the case's two
// measurements):
//   alone   no co-runner;
//   duty30  a process that computes for 30 % of every 20 ms and sleeps
//           for the rest: a trainer's Python thread and driver threads;
//   duty60  the same at 60 %;
//   stream  a process copying 64 MiB buffers back and forth without pause:
//           a neighbour that takes memory bandwidth and last-level cache
//           (as stress-ng --stream does).
// In every case, under the same co-runner, it measures the stages' work
// with no engine on --threads threads at once (the plain loop of
// lc0_pipeline_benchmark, --threads passes over the chunks shared by
// --threads threads: the bound) and the pipeline
// (proto/examples/lc0_train.textproto on --threads worker threads: a short
// warm-up, then --batches batches), in alternating order from round to
// round. Both sides place their threads alike: --placement sets the
// pipeline's worker_placement, and the bound's threads are pinned to the
// same CPUs when the pipeline's are (engine/worker_placement.h), so the
// bound never lacks what the engine does. Rounds repeat the cases in turn
// (alone, duty30, ..., alone, ...), so a slow spell of the host lands on every
// case alike.
//
// Per round and case it prints positions/s of both, their ratio, and for
// each side: CPU seconds per wall second of its threads, context switches
// (voluntary: the thread waited; involuntary: it was preempted) and
// migrations between cores, per 1000 batches' worth of positions, from
// /proc/self/task/*; the CPU s per wall s of the thread that takes the
// batches (the consumer); the share of a core the co-runner got; and,
// measured just before the case, how long a cache line takes to pass
// between the workers' CPUs (bench/cache_line_probe.h: on a VM, whether the
// host runs them on cores that share a cache). Then a
// summary per case (min, median, max of the ratio; what the pipeline and
// the bound kept of their alone rates of the same round, median over
// rounds, beside the co-runner's share of the machine, so a loss beyond the
// co-runner's CPU time shows, and whether the bound lost it too) and one
// JSON line (prefixed "JSON ").
//
// Run from the repository (it reads proto/examples/); data as for
// lc0_pipeline_benchmark (generated once into /tmp/sluice_lc0_bench_<N>).
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <latch>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/cache_line_probe.h"
#include "bench/lc0_bench_support.h"
#include "engine/data_loader.h"
#include "engine/pipeline.h"
#include "engine/worker_placement.h"
#include "stages/stage_factory.h"

namespace sluice::lc0 {
namespace {

using bench::Clock;
using bench::Die;
using bench::kBatchSize;
using bench::Seconds;

// ---- per-thread accounting from /proc/self/task ----

// What the kernel counts for one thread.
struct ThreadCounters {
  double cpu_seconds = 0;  // user + system
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;
  uint64_t migrations = 0;
};

ThreadCounters& operator+=(ThreadCounters& a, const ThreadCounters& b) {
  a.cpu_seconds += b.cpu_seconds;
  a.voluntary_switches += b.voluntary_switches;
  a.involuntary_switches += b.involuntary_switches;
  a.migrations += b.migrations;
  return a;
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The number after `key` in a "key: value" file; 0 when absent.
uint64_t FieldValue(const std::string& text, const std::string& key) {
  const size_t at = text.find(key);
  if (at == std::string::npos) return 0;
  size_t value = text.find_first_of("0123456789", at + key.size());
  if (value == std::string::npos) return 0;
  return std::strtoull(text.c_str() + value, nullptr, 10);
}

// The counters of this process's threads whose name starts with `prefix`,
// summed.
ThreadCounters CountThreads(const std::string& prefix) {
  ThreadCounters total;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  for (const auto& task : std::filesystem::directory_iterator(
           "/proc/self/task",
           std::filesystem::directory_options::skip_permission_denied)) {
    const std::string dir = task.path();
    std::string name = ReadSmallFile(dir + "/comm");
    if (name.rfind(prefix, 0) != 0) continue;
    // stat: "tid (comm) state ... utime stime" (fields 14 and 15); comm may
    // hold spaces, so count from the closing parenthesis.
    const std::string stat = ReadSmallFile(dir + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
      if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
    }
    const std::string status = ReadSmallFile(dir + "/status");
    ThreadCounters one;
    one.cpu_seconds = (utime + stime) / ticks;
    one.voluntary_switches = FieldValue(status, "voluntary_ctxt_switches:");
    one.involuntary_switches =
        FieldValue(status, "nonvoluntary_ctxt_switches:");
    one.migrations =
        FieldValue(ReadSmallFile(dir + "/sched"), "se.nr_migrations");
    total += one;
  }
  return total;
}

// ---- co-runners ----

enum class CoRunner { kNone, kDuty30, kDuty60, kStream };

struct Case {
  std::string name;
  CoRunner co_runner;
};

const std::vector<Case>& AllCases() {
  static const std::vector<Case> cases = {{"alone", CoRunner::kNone},
                                          {"duty30", CoRunner::kDuty30},
                                          {"duty60", CoRunner::kDuty60},
                                          {"stream", CoRunner::kStream}};
  return cases;
}

// Computes for `duty` of every 20 ms period and sleeps for the rest;
// never returns. Only async-signal-safe calls: it runs in a forked child.
[[noreturn]] void RunDutyCycle(double duty) {
  constexpr int64_t kPeriodNs = 20'000'000;
  const int64_t busy_ns = static_cast<int64_t>(duty * kPeriodNs);
  auto now_ns = [] {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  };
  volatile uint64_t sink = 1;
  for (int64_t period_start = now_ns();; period_start += kPeriodNs) {
    uint64_t x = sink;
    while (now_ns() - period_start < busy_ns) {
      for (int i = 0; i < 1000; ++i) x = x * 6364136223846793005ull + 1;
    }
    sink = x;
    const int64_t rest = period_start + kPeriodNs - now_ns();
    if (rest > 0) {
      timespec pause{.tv_sec = 0, .tv_nsec = static_cast<long>(rest)};
      ::nanosleep(&pause, nullptr);
    }
  }
}

// Copies two 64 MiB buffers into each other without pause; never returns.
[[noreturn]] void RunStream() {
  constexpr size_t kBytes = 64u << 20;
  void* a = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* b = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (a == MAP_FAILED || b == MAP_FAILED) ::_exit(1);
  ::memset(a, 1, kBytes);
  for (;;) {
    ::memcpy(b, a, kBytes);
    ::memcpy(a, b, kBytes);
  }
}

// A co-runner process from start to Stop(); none for kNone.
class CoRunnerProcess {
 public:
  explicit CoRunnerProcess(CoRunner kind) {
    if (kind == CoRunner::kNone) return;
    start_ = Clock::now();
    pid_ = ::fork();
    if (pid_ < 0) Die("fork failed");
    if (pid_ == 0) {
      if (kind == CoRunner::kStream) RunStream();
      RunDutyCycle(kind == CoRunner::kDuty30 ? 0.3 : 0.6);
    }
  }
  ~CoRunnerProcess() { Stop(); }

  // Kills it; the share of one core it used (0 without one).
  double Stop() {
    if (pid_ <= 0) return share_;
    ::kill(pid_, SIGKILL);
    int status = 0;
    rusage usage{};
    ::wait4(pid_, &status, 0, &usage);
    pid_ = -1;
    auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
    share_ = (seconds(usage.ru_utime) + seconds(usage.ru_stime)) /
             Seconds(Clock::now() - start_);
    return share_;
  }

 private:
  pid_t pid_ = -1;
  Clock::time_point start_;
  double share_ = 0;
};

// ---- the two measurements ----

// Positions per second and the counters of the threads that did the work.
struct Measurement {
  double positions_per_second = 0;
  double seconds = 0;
  ThreadCounters counters;
  // The thread that takes the batches (the pipeline only): CPU s.
  double consumer_cpu_seconds = 0;
};

ThreadCounters Difference(const ThreadCounters& after,
                          const ThreadCounters& before) {
  return {after.cpu_seconds - before.cpu_seconds,
          after.voluntary_switches - before.voluntary_switches,
          after.involuntary_switches - before.involuntary_switches,
          after.migrations - before.migrations};
}

// The stages' work with no engine on `threads` threads at once (named
// "bound-<i>"), each with its own window, sharing `threads` passes over
// the chunks: a thread takes the next chunk when it is done with one, so
// a thread slowed by a co-runner takes fewer and both finish together (as
// the pipeline's workers share their work). Each thread first makes one
// untimed pass of its own. All positions of the timed part over the time
// until the last thread is done.
Measurement MeasureBound(const std::vector<std::string>& chunks,
                         size_t window_frames, unsigned threads,
                         const std::vector<int>& pinned_cpus) {
  std::atomic<size_t> next{0};
  const size_t total = threads * chunks.size();
  std::atomic<uint64_t> positions{0};
  std::vector<ThreadCounters> counters(threads);
  std::latch warm(threads + 1);
  Clock::time_point start;
  {
    std::vector<std::jthread> workers;
    for (unsigned t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const std::string name = "bound-" + std::to_string(t);
        ::pthread_setname_np(::pthread_self(), name.c_str());
        if (!pinned_cpus.empty() && !PinCurrentThread(pinned_cpus[t])) {
          Die("cannot pin " + name);
        }
        // One untimed pass first: the window's records and the batch are
        // allocated and touched, as the pipeline's are after its warm-up.
        bench::StageWorker worker(window_frames);
        size_t own = 0;
        worker.Run([&]() -> const std::string* {
          return own < chunks.size() ? &chunks[own++] : nullptr;
        });
        warm.arrive_and_wait();
        const ThreadCounters before = CountThreads(name);
        positions += worker.Run([&]() -> const std::string* {
          const size_t i = next.fetch_add(1, std::memory_order_relaxed);
          return i < total ? &chunks[i % chunks.size()] : nullptr;
        });
        counters[t] = Difference(CountThreads(name), before);
      });
    }
    warm.arrive_and_wait();
    start = Clock::now();
  }
  Measurement result;
  result.seconds = Seconds(Clock::now() - start);
  result.positions_per_second = positions.load() / result.seconds;
  for (const ThreadCounters& one : counters) result.counters += one;
  return result;
}

// The pipeline on `threads` worker threads: `warm_up` of batches first
// (the reservoir fills), then `batches` batches timed, with the counters
// of its worker threads ("sluice-w*") over the timed part.
Measurement MeasurePipeline(const std::string& dir, unsigned threads,
                            int batches, bool deterministic,
                            DataLoaderConfig::WorkerPlacement placement,
                            Clock::duration warm_up) {
  DataLoader loader(CreateStage);
  DataLoaderConfig config = bench::TrainConfig(dir, threads, deterministic);
  config.set_worker_placement(placement);
  loader.Configure(config);
  const auto start = Clock::now();
  loader.Start();
  while (Clock::now() - start < warm_up) {
    if (!loader.GetNext<TypedBatch>()) Die("the pipeline ended");
  }
  const ThreadCounters before = CountThreads("sluice-w");
  const ThreadCounters consumer_before = CountThreads("consumer");
  const auto steady = Clock::now();
  for (int i = 0; i < batches; ++i) {
    if (!loader.GetNext<TypedBatch>()) Die("the pipeline ended");
  }
  Measurement result;
  result.seconds = Seconds(Clock::now() - steady);
  result.counters = Difference(CountThreads("sluice-w"), before);
  result.consumer_cpu_seconds =
      Difference(CountThreads("consumer"), consumer_before).cpu_seconds;
  result.positions_per_second = batches * kBatchSize / result.seconds;
  loader.Stop();
  return result;
}

// ---- the report ----

struct Sample {
  Measurement bound;
  Measurement pipeline;
  double co_runner_share = 0;
  // One-way cache-line transfer between the first two workers' CPUs just
  // before the case (bench/cache_line_probe.h); nullopt if not measured.
  std::optional<double> probe_ns;
  double ratio() const {
    return pipeline.positions_per_second / bound.positions_per_second;
  }
};

// "cpu/s vol invol migr" per 1000 batches' worth of positions.
std::string Describe(const Measurement& m) {
  const double per_k_batches =
      1000.0 * kBatchSize / (m.positions_per_second * m.seconds);
  char text[160];
  std::snprintf(text, sizeof(text), "%4.2f %7.0f %6.0f %6.0f",
                m.counters.cpu_seconds / m.seconds,
                m.counters.voluntary_switches * per_k_batches,
                m.counters.involuntary_switches * per_k_batches,
                m.counters.migrations * per_k_batches);
  return text;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<Case> ParseCases(const std::string& list) {
  std::vector<Case> cases;
  std::stringstream names(list);
  std::string name;
  while (std::getline(names, name, ',')) {
    auto known = std::find_if(AllCases().begin(), AllCases().end(),
                              [&](const Case& c) { return c.name == name; });
    if (known == AllCases().end()) Die("unknown case " + name);
    cases.push_back(*known);
  }
  if (cases.empty()) Die("no cases");
  return cases;
}

int Main(int argc, char** argv) {
  bench::SetProgramName("contention_benchmark");
  // This thread takes the batches; named so that its CPU time is found.
  ::pthread_setname_np(::pthread_self(), "consumer");
  int rounds = 5;
  unsigned threads = 2;
  int batches = 600;
  int games = 2000;
  bool deterministic = false;
  DataLoaderConfig::WorkerPlacement placement = DataLoaderConfig::AUTO;
  std::vector<Case> cases = AllCases();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--rounds") {
      rounds = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--threads") {
      threads = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--batches") {
      batches = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--games") {
      games = std::atoi(value.c_str());
    } else if (flag == "--cases") {
      cases = ParseCases(value);
    } else if (flag == "--deterministic") {
      deterministic = std::atoi(value.c_str()) != 0;
    } else if (flag == "--placement") {
      std::string upper = value;
      std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
      if (!DataLoaderConfig::WorkerPlacement_Parse(upper, &placement)) {
        Die("--placement takes auto, pinned or floating");
      }
    } else {
      Die("unknown flag " + flag);
    }
  }
  const std::string dir = "/tmp/sluice_lc0_bench_" + std::to_string(games);
  const std::vector<std::string> chunks =
      bench::ReadChunks(bench::EnsureData(dir, games));
  const size_t window = bench::ReservoirSize(bench::TrainConfig(dir, threads));
  constexpr auto kWarmUp = std::chrono::seconds(3);
  const std::vector<int> pinned_cpus = PinnedCpus(
      PlacementOf(placement), threads, AllowedCpus(), ProcessNiceness());
  const std::string pinned_text =
      pinned_cpus.empty()
          ? "floating"
          : absl::StrCat("pinned to CPU ", absl::StrJoin(pinned_cpus, ","));
  std::printf(
      "%u threads (%s), %d batches of %zu per pipeline run%s; bound: the "
      "stages' work with no engine on %u threads at once, placed alike\n"
      "per side: cpu = CPU s per wall s of its threads; vol, invol, migr = "
      "voluntary and involuntary context switches and migrations per 1000 "
      "batches' worth of positions\n\n",
      threads, pinned_text.c_str(), batches, kBatchSize,
      deterministic ? " (deterministic)" : "", threads);
  std::printf("%-5s %-7s %8s %11s %11s %6s  %-29s  %-29s  %s\n", "round",
              "case", "probe ns", "pipeline/s", "bound/s", "ratio",
              "pipeline: cpu vol invol migr", "bound: cpu vol invol migr",
              "co-runner core share");
  const auto probe = [&pinned_cpus] {
    return pinned_cpus.size() >= 2
               ? sluice::bench::CacheLineTransferNanoseconds(pinned_cpus[0],
                                                             pinned_cpus[1])
               : sluice::bench::CacheLineTransferOfFirstTwoCpus();
  };
  std::map<std::string, std::vector<Sample>> samples;
  for (int round = 0; round < rounds; ++round) {
    for (const Case& c : cases) {
      Sample sample;
      sample.probe_ns = probe();
      CoRunnerProcess co_runner(c.co_runner);
      // Alternate which side goes first, so that neither always meets the
      // co-runner (or the page cache, or the host) fresher.
      if (round % 2 == 0) {
        sample.bound = MeasureBound(chunks, window, threads, pinned_cpus);
      }
      sample.pipeline = MeasurePipeline(dir, threads, batches, deterministic,
                                        placement, kWarmUp);
      if (round % 2 == 1) {
        sample.bound = MeasureBound(chunks, window, threads, pinned_cpus);
      }
      sample.co_runner_share = co_runner.Stop();
      std::printf(
          "%-5d %-7s %8s %11.0f %11.0f %5.0f%%  %-29s %8.2f  %-29s  %.2f\n",
          round + 1, c.name.c_str(),
          sluice::bench::ProbeText(sample.probe_ns).c_str(),
          sample.pipeline.positions_per_second,
          sample.bound.positions_per_second, 100 * sample.ratio(),
          Describe(sample.pipeline).c_str(),
          sample.pipeline.consumer_cpu_seconds / sample.pipeline.seconds,
          Describe(sample.bound).c_str(), sample.co_runner_share);
      std::fflush(stdout);
      samples[c.name].push_back(sample);
    }
  }
  const std::vector<Sample>& alone = samples["alone"];
  std::printf("\n%-7s %23s %26s %15s %6s %19s %16s\n", "case",
              "ratio min/median/max", "pipeline/s min/median/max",
              "kept: pipeline", "bound", "co-runner/machine",
              "probe ns min-max");
  std::string json =
      "{\"benchmark\":\"contention\",\"threads\":" + std::to_string(threads) +
      ",\"pinned\":" + (pinned_cpus.empty() ? "false" : "true") +
      ",\"rounds\":" + std::to_string(rounds);
  for (const Case& c : cases) {
    std::vector<double> ratios, rates, shares, probes, pipeline_kept,
        bound_kept;
    for (size_t round = 0; round < samples[c.name].size(); ++round) {
      const Sample& s = samples[c.name][round];
      ratios.push_back(s.ratio());
      rates.push_back(s.pipeline.positions_per_second);
      shares.push_back(s.co_runner_share);
      if (s.probe_ns) probes.push_back(*s.probe_ns);
      if (round < alone.size()) {
        pipeline_kept.push_back(s.pipeline.positions_per_second /
                                alone[round].pipeline.positions_per_second);
        bound_kept.push_back(s.bound.positions_per_second /
                             alone[round].bound.positions_per_second);
      }
    }
    const sluice::bench::ProbeRange probe_range =
        sluice::bench::RangeOf(probes);
    const double median_rate = Median(rates);
    const double kept = pipeline_kept.empty() ? 0 : Median(pipeline_kept);
    const double bound_kept_median =
        bound_kept.empty() ? 0 : Median(bound_kept);
    // The co-runner's CPU time as a share of the CPUs the workers use.
    const double machine_share = Median(shares) / threads;
    std::printf(
        "%-7s %6.0f%% %6.0f%% %6.0f%%  %8.0f %8.0f %8.0f  %14.0f%% %5.0f%% "
        "%18.0f%% %16s\n",
        c.name.c_str(), 100 * *std::min_element(ratios.begin(), ratios.end()),
        100 * Median(ratios),
        100 * *std::max_element(ratios.begin(), ratios.end()),
        *std::min_element(rates.begin(), rates.end()), median_rate,
        *std::max_element(rates.begin(), rates.end()), 100 * kept,
        100 * bound_kept_median, 100 * machine_share,
        probe_range.Text().c_str());
    const std::string key = ",\"" + c.name + "_";
    json += key + "ratio_median\":" + std::to_string(Median(ratios)) + key +
            "ratio_min\":" +
            std::to_string(*std::min_element(ratios.begin(), ratios.end())) +
            key +
            "positions_per_second_median\":" + std::to_string(median_rate) +
            key + "kept_of_alone\":" + std::to_string(kept) + key +
            "bound_kept_of_alone\":" + std::to_string(bound_kept_median) + key +
            "co_runner_share\":" + std::to_string(Median(shares)) + key +
            "co_runner_machine_share\":" + std::to_string(machine_share);
    if (probe_range.min_ns) {
      json += key + "probe_ns_min\":" + std::to_string(*probe_range.min_ns) +
              key + "probe_ns_max\":" + std::to_string(*probe_range.max_ns);
    }
  }
  std::printf("JSON %s}\n", json.c_str());
  return 0;
}

}  // namespace
}  // namespace sluice::lc0

int main(int argc, char** argv) { return sluice::lc0::Main(argc, argv); }
