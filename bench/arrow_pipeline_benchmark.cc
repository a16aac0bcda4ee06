// arrow_source -> batcher on generated Arrow files (a 1 KiB float32 column,
// batches of 1024), page cache warm, against the raw pread rate of the same
// files measured in the same run on as many threads as the pipeline has
// (each thread preads whole files in 1 MiB blocks), and on one thread.
// Each run sits between raw reads (raw, run, raw) and is compared with
// their means. Per round and thread count it also times the no-engine
// bound of a pipeline: the same pread threads, placed as the pipeline's
// workers, each reading into its own recycled buffers and handing every
// block through a bounded queue (8 blocks) to the main thread, which takes
// it and gives the buffer back, as a trainer takes batches: what moving
// the blocks to a consumer costs by itself, with no stage, coroutine or
// executor. Beside it, the same pread threads each reading into
// kBuffersPerReader buffers in turn with no consumer: what a working set
// of that many buffers costs the copy by itself (pread into one buffer
// keeps its destination in the core's cache). A run's rate is its steady rate,
// from its first batch to its last; the time to the first batch (threads and
// rings started, every file's record batches numbered) is printed beside it.
// Before each round it probes how far apart the host runs the first two CPUs
// (bench/cache_line_probe.h) and prints the range: two pread threads scale
// differently on cores that share a cache and on cores that do not.
//
// The source hands the batcher row blocks (output: ROW_BLOCKS) on 1 and 2
// threads, and one Example per row (output: EXAMPLES, the path of data
// sets whose rows are not of fixed size) on the same thread counts. Block runs
// go once with the batcher in input order (the source then cuts its blocks on
// the batcher's batch boundaries, reading each batch's rows straight into one
// buffer) and once with `block_order: VIEWS_FIRST`. Record batches of
// --rows-per-batch rows: 1024 (the default), or 1000 (what Hugging Face
// datasets writes). The files are written, flushed and dropped from the page
// cache, then read once: the page cache then holds them as a reader of existing
// data finds them (filled by readahead, in large folios), not as the writer
// left them (freshly written files read at 15-24 GB/s from one file to the next
// on the 2-core VM, the same files read back at 28-30 GB/s). --rows (default
// 2,000,000: 2.1 GB) long enough that a pass lasts tens of milliseconds;
// each pipeline runs once untimed first, so that its read buffers are no
// longer fresh. Prints a table and one JSON line.
//
//   out/release/bench/arrow_pipeline_benchmark [--rows N] [--rounds R]
//       [--threads 1,2] [--rows-per-batch 1024]
//       [--placement auto|pinned|floating]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/cache_line_probe.h"
#include "bindings/cli/arrow_data.h"
#include "engine/config_text.h"
#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "engine/worker_placement.h"
#include "stages/stage_factory.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int64_t rows = 2'000'000;
  int rounds = 3;
  std::vector<int> threads = {1, 2};
  int64_t rows_per_batch = 1024;
  std::string placement = "AUTO";  // the pipelines' worker_placement
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "arrow_pipeline_benchmark: %s\n", message.c_str());
  std::exit(1);
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      Die("usage: [--rows N] [--rounds R] [--threads 1,2] "
          "[--rows-per-batch R] [--placement auto|pinned|floating]");
    }
    const std::string value = argv[++i];
    if (flag == "--rows" && absl::SimpleAtoi(value, &options.rows) &&
        options.rows > 0) {
      continue;
    }
    if (flag == "--rounds" && absl::SimpleAtoi(value, &options.rounds) &&
        options.rounds > 0) {
      continue;
    }
    if (flag == "--rows-per-batch" &&
        absl::SimpleAtoi(value, &options.rows_per_batch) &&
        options.rows_per_batch > 0) {
      continue;
    }
    if (flag == "--placement") {
      options.placement = absl::AsciiStrToUpper(value);
      DataLoaderConfig::WorkerPlacement placement;
      if (!DataLoaderConfig::WorkerPlacement_Parse(options.placement,
                                                   &placement)) {
        Die("--placement takes auto, pinned or floating");
      }
      continue;
    }
    if (flag == "--threads") {
      options.threads.clear();
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        int threads = 0;
        if (!absl::SimpleAtoi(part, &threads) || threads < 1) {
          Die("--threads takes a list such as 1,2");
        }
        options.threads.push_back(threads);
      }
      continue;
    }
    Die("unknown or bad flag " + flag);
  }
  return options;
}

// Seconds to pread every file whole in 1 MiB blocks, on `threads` threads
// (file i on thread i % threads), each thread reading into its
// `buffers_per_thread` buffers in turn (allocated and touched before the
// clock starts).
double RawRead(const std::vector<std::string>& paths, int threads,
               size_t buffers_per_thread = 1) {
  std::vector<std::vector<std::vector<char>>> buffers(
      threads, std::vector<std::vector<char>>(buffers_per_thread,
                                              std::vector<char>(1 << 20)));
  const auto read_share = [&paths, &buffers, threads](int thread) {
    std::vector<std::vector<char>>& mine = buffers[thread];
    size_t next = 0;
    for (size_t i = thread; i < paths.size(); i += threads) {
      const int fd = open(paths[i].c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) Die("cannot open " + paths[i]);
      for (off_t offset = 0;;) {
        std::vector<char>& buffer = mine[next++ % mine.size()];
        const ssize_t got = pread(fd, buffer.data(), buffer.size(), offset);
        if (got < 0) Die("read failed");
        if (got == 0) break;
        offset += got;
      }
      close(fd);
    }
  };
  const auto start = Clock::now();
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(read_share, t);
  read_share(0);
  for (std::thread& helper : helpers) helper.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The hand-off's queue, in blocks, and each reader's buffers: the queue,
// one being read, one being taken, and two to spare.
constexpr size_t kHandOffBlocks = 8;
constexpr size_t kBuffersPerReader = kHandOffBlocks + 4;

// Seconds to read every file as RawRead does, on `threads` threads placed
// as the pipeline's workers, each handing its 1 MiB blocks to the calling
// thread through one queue of kHandOffBlocks; the caller takes each block
// and returns its buffer to the thread that filled it. Buffers are
// recycled last-in first-out per thread (kBuffersPerReader), so that a
// reader writes the buffer it wrote least long ago, as the pipeline's pool
// does. Threads the host does not let it pin float, as the pipeline's
// workers then do.
double HandOffRead(const std::vector<std::string>& paths, int threads) {
  constexpr size_t kBlockBytes = size_t{1} << 20;
  struct Block {
    std::vector<char> buffer;
    int reader = 0;
  };
  std::mutex mu;
  std::condition_variable not_empty, not_full;
  std::deque<Block> queue;
  int readers_done = 0;
  // Per reader: its free buffers, guarded by `mu` (taken once per block).
  std::vector<std::vector<std::vector<char>>> free(threads);
  for (auto& buffers : free) {
    for (size_t b = 0; b < kBuffersPerReader; ++b) {
      buffers.emplace_back(kBlockBytes);
    }
  }
  const std::vector<int> cpus = PinnedCpus(WorkerPlacement::kAuto, threads,
                                           AllowedCpus(), ProcessNiceness());
  const auto read_share = [&](int thread) {
    if (!cpus.empty()) PinCurrentThread(cpus[thread]);
    for (size_t i = thread; i < paths.size(); i += threads) {
      const int fd = open(paths[i].c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) Die("cannot open " + paths[i]);
      for (off_t offset = 0;;) {
        std::vector<char> buffer;
        {
          std::unique_lock lock(mu);
          not_full.wait(lock, [&] { return !free[thread].empty(); });
          buffer = std::move(free[thread].back());
          free[thread].pop_back();
        }
        const ssize_t got = pread(fd, buffer.data(), buffer.size(), offset);
        if (got < 0) Die("read failed");
        std::unique_lock lock(mu);
        if (got == 0) {
          free[thread].push_back(std::move(buffer));
          break;
        }
        offset += got;
        not_full.wait(lock, [&] { return queue.size() < kHandOffBlocks; });
        queue.push_back({std::move(buffer), thread});
        if (queue.size() == 1) not_empty.notify_one();
      }
      close(fd);
    }
    std::lock_guard lock(mu);
    ++readers_done;
    not_empty.notify_one();
  };
  const auto start = Clock::now();
  std::vector<std::thread> readers;
  for (int t = 0; t < threads; ++t) readers.emplace_back(read_share, t);
  while (true) {
    std::unique_lock lock(mu);
    not_empty.wait(lock,
                   [&] { return !queue.empty() || readers_done == threads; });
    if (queue.empty()) break;
    Block block = std::move(queue.front());
    queue.pop_front();
    free[block.reader].push_back(std::move(block.buffer));
    lock.unlock();
    not_full.notify_all();
  }
  for (std::thread& reader : readers) reader.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Writes `paths` to disk and drops them from the page cache, so that the
// warming read brings them back as a reader of existing data finds them.
void DropFromPageCache(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Die("cannot open " + path);
    if (fdatasync(fd) != 0 ||
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
      Die("cannot drop " + path + " from the page cache");
    }
    close(fd);
  }
}

// One pipeline to measure.
struct PipelineRun {
  int threads = 1;
  bool blocks = true;        // output: ROW_BLOCKS, else EXAMPLES
  bool views_first = false;  // the batcher's block_order: VIEWS_FIRST
  std::string Name() const {
    return absl::StrCat(blocks ? "row blocks" : "examples", " -> batcher",
                        views_first ? " (views first)" : "", ", ", threads,
                        " thr");
  }
};

// One eval pass of a pipeline, timed.
struct Pass {
  double rows_per_second = 0;      // from the first batch to the last
  double first_batch_seconds = 0;  // from Start() to the first batch
};

// One eval pass of arrow_source -> batcher; checks that every row arrived.
Pass Pipeline(const std::string& dir, const PipelineRun& run, int64_t rows,
              const std::string& placement) {
  const std::string text = absl::StrCat(
      "worker_threads: ", run.threads, " worker_placement: ", placement,
      " metrics_interval_seconds: 10\n"
      "stage { name: 'files' file_path_provider { directory: '",
      dir,
      "' mode: ONCE } }\n"
      "stage { name: 'rows' input: 'files' arrow_source { mode: EVAL output: ",
      run.blocks ? "ROW_BLOCKS" : "EXAMPLES",
      " column { name: 'embedding' } } }\n"
      "stage { name: 'batches' input: 'rows' batcher { batch_size: 1024 ",
      run.views_first ? "block_order: VIEWS_FIRST " : "",
      "field { name: 'embedding' dtype: 'float32' shape: [256] } } }\n");
  absl::StatusOr<DataLoaderConfig> config = ParseConfigText(text, "bench");
  if (!config.ok()) Die(config.status().ToString());
  DataLoader loader(CreateStage);
  loader.Configure(*config);
  const auto start = Clock::now();
  loader.Start();
  int64_t seen = 0;
  int64_t first_batch_rows = 0;
  Clock::time_point first_batch;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    if (seen == 0) {
      first_batch = Clock::now();
      first_batch_rows = static_cast<int64_t>(batch->size());
    }
    seen += static_cast<int64_t>(batch->size());
  }
  const Clock::time_point end = Clock::now();
  loader.Stop();
  if (seen != rows || seen == first_batch_rows) {
    Die(absl::StrCat("the pipeline delivered ", seen, " of ", rows,
                     " rows (a pass needs more than one batch)"));
  }
  return Pass{.rows_per_second =
                  static_cast<double>(seen - first_batch_rows) /
                  std::chrono::duration<double>(end - first_batch).count(),
              .first_batch_seconds =
                  std::chrono::duration<double>(first_batch - start).count()};
}

int Run(const Options& options) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sluice_arrow_bench").string();
  std::filesystem::remove_all(dir);
  absl::StatusOr<cli::ArrowDataset> data =
      cli::WriteArrowDataset({.dir = dir,
                              .rows = options.rows,
                              .row_bytes = 16,
                              .files = 4,
                              .rows_per_batch = options.rows_per_batch});
  if (!data.ok()) Die(data.status().ToString());
  std::vector<PipelineRun> runs;
  for (int threads : options.threads) runs.push_back({.threads = threads});
  for (int threads : options.threads) {
    runs.push_back({.threads = threads, .views_first = true});
  }
  for (int threads : options.threads) {
    runs.push_back({.threads = threads, .blocks = false});
  }
  DropFromPageCache(data->paths);
  RawRead(data->paths, 1);  // warm the page cache
  // One untimed run of each pipeline first, as the raw read is warmed: the
  // first loader of a process allocates its read buffers fresh (a page
  // fault per 4 KiB); later loaders take them from the process's idle
  // buffers (stages/generic/internal/arrow_buffer_pool.h).
  for (const PipelineRun& run : runs) {
    Pipeline(dir, run, data->rows, options.placement);
  }
  // Per round, each run between raw reads on as many threads as the run
  // has and, for runs of more threads, on one thread too (raw, run, raw):
  // its ratios are taken against the means of the reads around it, so
  // that a pass of either kind (35 ms per GB) caught by one of the host's
  // pauses does not set the ratio of a run measured at another moment.
  std::map<int, double> best_raw;
  std::vector<double> best(runs.size(), 0);  // steady rows/s
  std::vector<std::vector<double>> first_batch_ms(runs.size());
  // Per run and round: against pread on the run's threads, on one thread.
  std::vector<std::vector<double>> ratios(runs.size());
  std::vector<std::vector<double>> one_thread_ratios(runs.size());
  const auto raw_reads = [&](int threads) {
    std::pair<double, double> seconds;  // on `threads`, on one thread
    seconds.first = RawRead(data->paths, threads);
    seconds.second = threads == 1 ? seconds.first : RawRead(data->paths, 1);
    for (const auto& [count, taken] :
         {std::pair{threads, seconds.first}, std::pair{1, seconds.second}}) {
      double& best_so_far = best_raw.try_emplace(count, taken).first->second;
      best_so_far = std::min(best_so_far, taken);
    }
    return seconds;
  };
  std::vector<double> probes;  // ns, before each round
  // The bounds without an engine, each timed per round and thread count
  // between two pread reads: its best rows/s and its ratios to them.
  struct Bound {
    std::string name;
    std::string json_key;
    std::function<double(int threads)> seconds;
    std::map<int, double> best;
    std::map<int, std::vector<double>> ratios;
  };
  std::vector<Bound> bounds;
  bounds.push_back(
      {.name = absl::StrCat("pread, ", kBuffersPerReader, " buffers in turn"),
       .json_key = "buffers_in_turn",
       .seconds = [&](int threads) {
         return RawRead(data->paths, threads, kBuffersPerReader);
       }});
  bounds.push_back({.name = "pread + hand-off",
                    .json_key = "hand_off",
                    .seconds = [&](int threads) {
                      return HandOffRead(data->paths, threads);
                    }});
  for (int round = 0; round < options.rounds; ++round) {
    if (const std::optional<double> probe =
            bench::CacheLineTransferOfFirstTwoCpus()) {
      probes.push_back(*probe);
    }
    for (int threads : options.threads) {
      for (Bound& bound : bounds) {
        const double before = raw_reads(threads).first;
        const double seconds = bound.seconds(threads);
        const double after = raw_reads(threads).first;
        const double rate = static_cast<double>(data->rows) / seconds;
        bound.best[threads] = std::max(bound.best[threads], rate);
        bound.ratios[threads].push_back(rate * (before + after) / 2 /
                                        static_cast<double>(data->rows));
      }
    }
    for (size_t r = 0; r < runs.size(); ++r) {
      const auto before = raw_reads(runs[r].threads);
      const Pass pass = Pipeline(dir, runs[r], data->rows, options.placement);
      const auto after = raw_reads(runs[r].threads);
      best[r] = std::max(best[r], pass.rows_per_second);
      first_batch_ms[r].push_back(pass.first_batch_seconds * 1e3);
      const auto raw_rate = [&](double seconds_before, double seconds_after) {
        return static_cast<double>(data->rows) /
               ((seconds_before + seconds_after) / 2);
      };
      ratios[r].push_back(pass.rows_per_second /
                          raw_rate(before.first, after.first));
      one_thread_ratios[r].push_back(pass.rows_per_second /
                                     raw_rate(before.second, after.second));
    }
  }
  const double gb = static_cast<double>(data->file_bytes) / 1e9;
  const bench::ProbeRange probe_range = bench::RangeOf(probes);
  std::printf(
      "%lld rows (1 KiB float32 each) in %zu files, %lld rows per record "
      "batch, %.1f MB, warm; %d interleaved rounds; cache-line probe before "
      "the rounds %s ns\n",
      static_cast<long long>(data->rows), data->paths.size(),
      static_cast<long long>(options.rows_per_batch), gb * 1e3, options.rounds,
      probe_range.Text().c_str());
  std::printf("%-34s %12s %9s %22s %22s %16s\n", "run (best round)", "rows/s",
              "GB/s", "of pread, same thr", "of pread, 1 thr", "1st batch, ms");
  std::string json =
      absl::StrFormat("{\"rows\":%d,\"rows_per_batch\":%d,\"file_bytes\":%d,",
                      data->rows, options.rows_per_batch, data->file_bytes);
  if (probe_range.min_ns) {
    json += absl::StrFormat("\"probe_ns_min\":%.1f,\"probe_ns_max\":%.1f,",
                            *probe_range.min_ns, *probe_range.max_ns);
  }
  json += "\"raw_rows_per_second\":{";
  for (const auto& [threads, seconds] : best_raw) {
    std::printf("%-34s %12.0f %9.2f\n",
                absl::StrCat("raw pread, 1 MiB, ", threads, " thr").c_str(),
                data->rows / seconds, gb / seconds);
    json += absl::StrFormat("%s\"%d\":%.0f",
                            threads == best_raw.begin()->first ? "" : ",",
                            threads, data->rows / seconds);
  }
  const auto range = [](const std::vector<double>& values) {
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    return std::pair{*low, *high};
  };
  json += "}";
  for (const Bound& bound : bounds) {
    json += absl::StrCat(",\"", bound.json_key, "\":[");
    for (const auto& [threads, rate] : bound.best) {
      const auto [low, high] = range(bound.ratios.at(threads));
      std::printf(
          "%-34s %12.0f %9.2f %22s\n",
          absl::StrCat(bound.name, ", ", threads, " thr").c_str(), rate,
          gb * rate / static_cast<double>(data->rows),
          absl::StrFormat("%.0f%% .. %.0f%%", 100 * low, 100 * high).c_str());
      json += absl::StrFormat(
          "%s{\"threads\":%d,\"rows_per_second\":%.0f,"
          "\"ratio_to_pread_min\":%.3f,\"ratio_to_pread_max\":%.3f}",
          threads == bound.best.begin()->first ? "" : ",", threads, rate, low,
          high);
    }
    json += "]";
  }
  json += ",\"runs\":[";
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto [low, high] = range(ratios[r]);
    const auto [one_low, one_high] = range(one_thread_ratios[r]);
    const auto [first_low, first_high] = range(first_batch_ms[r]);
    std::printf(
        "%-34s %12.0f %9.2f %22s %22s %16s\n", runs[r].Name().c_str(), best[r],
        gb * best[r] / static_cast<double>(data->rows),
        absl::StrFormat("%.0f%% .. %.0f%%", 100 * low, 100 * high).c_str(),
        absl::StrFormat("%.0f%% .. %.0f%%", 100 * one_low, 100 * one_high)
            .c_str(),
        absl::StrFormat("%.1f .. %.1f", first_low, first_high).c_str());
    json += absl::StrFormat(
        "%s{\"threads\":%d,\"blocks\":%s,\"views_first\":%s,"
        "\"rows_per_second\":%.0f,"
        "\"ratio_to_pread_min\":%.3f,\"ratio_to_pread_max\":%.3f,"
        "\"ratio_to_one_thread_pread_min\":%.3f,"
        "\"ratio_to_one_thread_pread_max\":%.3f,"
        "\"first_batch_ms_min\":%.2f,\"first_batch_ms_max\":%.2f}",
        r == 0 ? "" : ",", runs[r].threads, runs[r].blocks ? "true" : "false",
        runs[r].views_first ? "true" : "false", best[r], low, high, one_low,
        one_high, first_low, first_high);
  }
  std::printf("%s]}\n", json.c_str());
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::Run(sluice::ParseOptions(argc, argv));
}
