// arrow_source -> batcher on generated Arrow files (a 1 KiB float32 column,
// batches of 1024), page cache warm, against the raw pread rate of the same
// files measured in the same run, rounds interleaved (raw, 1 thread, 2
// threads, ...). Prints a table and one JSON line.
//
//   out/release/bench/arrow_pipeline_benchmark [--rows N] [--rounds R]
//                                              [--threads 1,2]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bindings/cli/arrow_data.h"
#include "engine/config_text.h"
#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "stages/stage_factory.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int64_t rows = 400'000;
  int rounds = 3;
  std::vector<int> threads = {1, 2};
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "arrow_pipeline_benchmark: %s\n", message.c_str());
  std::exit(1);
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Die("usage: [--rows N] [--rounds R] [--threads 1,2]");
    const std::string value = argv[++i];
    if (flag == "--rows" && absl::SimpleAtoi(value, &options.rows) &&
        options.rows > 0) {
      continue;
    }
    if (flag == "--rounds" && absl::SimpleAtoi(value, &options.rounds) &&
        options.rounds > 0) {
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

// Seconds to pread every file whole in 1 MiB blocks.
double RawRead(const std::vector<std::string>& paths) {
  std::vector<char> buffer(1 << 20);
  const auto start = Clock::now();
  for (const std::string& path : paths) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Die("cannot open " + path);
    for (off_t offset = 0;;) {
      const ssize_t got = pread(fd, buffer.data(), buffer.size(), offset);
      if (got < 0) Die("read failed");
      if (got == 0) break;
      offset += got;
    }
    close(fd);
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Seconds for one eval pass of arrow_source -> batcher on `threads`
// executor threads; checks that every row arrived.
double Pipeline(const std::string& dir, int threads, int64_t rows) {
  const std::string text = absl::StrCat(
      "worker_threads: ", threads,
      " metrics_interval_seconds: 10\n"
      "stage { name: 'files' file_path_provider { directory: '",
      dir,
      "' mode: ONCE } }\n"
      "stage { name: 'rows' input: 'files' arrow_source { mode: EVAL output: ROW_BLOCKS "
      "column { name: 'embedding' } } }\n"
      "stage { name: 'batches' input: 'rows' batcher { batch_size: 1024 "
      "field { name: 'embedding' dtype: 'float32' shape: [256] } } }\n");
  absl::StatusOr<DataLoaderConfig> config = ParseConfigText(text, "bench");
  if (!config.ok()) Die(config.status().ToString());
  DataLoader loader(CreateStage);
  loader.Configure(*config);
  const auto start = Clock::now();
  loader.Start();
  int64_t seen = 0;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    seen += static_cast<int64_t>(batch->size());
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  loader.Stop();
  if (seen != rows) {
    Die(absl::StrCat("the pipeline delivered ", seen, " of ", rows, " rows"));
  }
  return seconds;
}

int Run(const Options& options) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sluice_arrow_bench").string();
  std::filesystem::remove_all(dir);
  absl::StatusOr<cli::ArrowDataset> data = cli::WriteArrowDataset(
      {.dir = dir, .rows = options.rows, .row_bytes = 16, .files = 4});
  if (!data.ok()) Die(data.status().ToString());
  RawRead(data->paths);  // warm the page cache
  double raw = 1e9;
  std::vector<double> best(options.threads.size(), 1e9);
  for (int round = 0; round < options.rounds; ++round) {
    raw = std::min(raw, RawRead(data->paths));
    for (size_t t = 0; t < options.threads.size(); ++t) {
      best[t] =
          std::min(best[t], Pipeline(dir, options.threads[t], data->rows));
    }
  }
  const double gb = static_cast<double>(data->file_bytes) / 1e9;
  std::printf(
      "%lld rows (1 KiB float32 each) in %zu files, %.1f MB, warm; "
      "best of %d interleaved rounds\n",
      static_cast<long long>(data->rows), data->paths.size(), gb * 1e3,
      options.rounds);
  std::printf("%-26s %12s %9s %10s\n", "run", "rows/s", "GB/s", "of pread");
  std::printf("%-26s %12.0f %9.2f %9.0f%%\n", "raw pread, 1 MiB",
              data->rows / raw, gb / raw, 100.0);
  std::string json = absl::StrFormat(
      "{\"rows\":%d,\"file_bytes\":%d,\"raw_rows_per_second\":%.0f,\"runs\":[",
      data->rows, data->file_bytes, data->rows / raw);
  for (size_t t = 0; t < options.threads.size(); ++t) {
    const std::string name =
        absl::StrCat("arrow_source -> batcher, ", options.threads[t], " thr");
    std::printf("%-26s %12.0f %9.2f %9.0f%%\n", name.c_str(),
                data->rows / best[t], gb / best[t], 100 * raw / best[t]);
    json += absl::StrFormat(
        "%s{\"threads\":%d,\"rows_per_second\":%.0f,\"ratio_to_pread\":%.3f}",
        t == 0 ? "" : ",", options.threads[t], data->rows / best[t],
        raw / best[t]);
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
