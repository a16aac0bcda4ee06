// Chunk-feed benchmark: FilePathProvider -> ChunkSourceLoader ->
// ShufflingChunkPool on generated tar data read from the page cache.
//
//   build/bench/chunk_feed_benchmark [--games N] [--seconds S]
//                                    [--readers R] [--cache DIR]
//                                    [--repeat K] [--threads 1|2|0]
//                                    [--startup 0|1]
//
// Reports chunks/s and MB/s of compressed chunk bytes leaving the pool
// (consumed by a caller thread through GetNextFor), on 1 and 2 worker
// threads (--threads picks one; 0, the default, runs both), beside the raw
// sequential pread rate of the same files, read pass after pass for as long
// (S seconds, default 3; a single pass, the short burst measured before, is
// shown too); and the start-up case: 200 tars of 500 chunks present,
// chunk_pool_size 50,000, time to the first chunk (--startup 0 skips it).
// Every figure is the best of K runs (default 3), the raw rates included,
// raw and pool runs alternating, so that a scheduling hiccup on a shared
// machine does not decide the ratio; each pool run measures the steady
// state for S seconds after its first chunk. Data is generated once into
// DIR (default /tmp/sluice_chunk_feed_bench) and reused. Prints a table and
// one JSON line (prefixed "JSON ").
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "engine/log.h"
#include "google/protobuf/text_format.h"
#include "io/tar_index.h"
#include "stages/lc0/chunk.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/stage_factory.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void Die(const std::string& message) {
  std::fprintf(stderr, "chunk_feed_benchmark: %s\n", message.c_str());
  std::exit(1);
}

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".tar") {
      files.push_back(entry.path().string());
    }
  }
  return files;
}

// Generates `games` games as tars of 100 unless `dir` already holds them.
void EnsureThroughputData(const std::string& dir, int games) {
  if (fs::exists(dir + "/.complete")) return;
  fs::remove_all(dir);
  std::printf("generating %d games into %s ...\n", games, dir.c_str());
  auto files = lc0::WriteGames({.seed = 1, .version = 6, .input_format = 1},
                               {.mode = lc0::OutputMode::kTar,
                                .dir = dir,
                                .games = games,
                                .games_per_tar = 100});
  if (!files.ok()) Die(files.status().ToString());
  std::FILE* done = std::fopen((dir + "/.complete").c_str(), "w");
  if (done != nullptr) std::fclose(done);
}

// 200 tars of 500 members each. The members are real gzip chunks of
// one-position games (~1-2 KB): time to the first chunk depends on the tar
// headers read, not on member sizes, and this keeps the set at ~300 MB.
void EnsureStartupData(const std::string& dir) {
  if (fs::exists(dir + "/.complete")) return;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::printf("generating 200 x 500-chunk tars into %s ...\n", dir.c_str());
  std::vector<std::string> chunks;
  for (int g = 0; g < 500; ++g) {
    auto game = lc0::GenerateGame({.seed = 2}, g);
    if (!game.ok()) Die(game.status().ToString());
    auto gz = lc0::GzipChunk(game->substr(0, 8356));
    if (!gz.ok()) Die(gz.status().ToString());
    chunks.push_back(*gz);
  }
  for (int t = 0; t < 200; ++t) {
    std::string tar;
    for (int m = 0; m < 500; ++m) {
      char header[512] = {};
      std::snprintf(header, 100, "training.%d.gz", 100000000 + t * 500 + m);
      std::snprintf(header + 100, 8, "0000644");
      std::snprintf(header + 108, 8, "0000000");
      std::snprintf(header + 116, 8, "0000000");
      std::snprintf(header + 124, 12, "%011o",
                    static_cast<unsigned>(chunks[m].size()));
      std::snprintf(header + 136, 12, "%011o", 0u);
      std::memset(header + 148, ' ', 8);
      header[156] = '0';
      std::memcpy(header + 257,
                  "ustar\0"
                  "00",
                  8);
      unsigned sum = 0;
      for (unsigned char c : header) sum += c;
      std::snprintf(header + 148, 8, "%06o", sum);
      tar.append(header, 512);
      tar += chunks[m];
      tar.append((512 - chunks[m].size() % 512) % 512, '\0');
    }
    tar.append(1024, '\0');
    char name[64];
    std::snprintf(name, sizeof(name), "/training-%04d.tar", t);
    std::FILE* out = std::fopen((dir + name).c_str(), "wb");
    if (out == nullptr ||
        std::fwrite(tar.data(), 1, tar.size(), out) != tar.size()) {
      Die("cannot write " + dir + name);
    }
    std::fclose(out);
  }
  std::FILE* done = std::fopen((dir + "/.complete").c_str(), "w");
  if (done != nullptr) std::fclose(done);
}

struct Rate {
  double chunks_per_second = 0;
  double megabytes_per_second = 0;
};

// The faster of two measurements (by bytes per second).
Rate Best(const Rate& a, const Rate& b) {
  return a.megabytes_per_second >= b.megabytes_per_second ? a : b;
}

// Sequential pread of every file, 1 MiB at a time, pass after pass until
// `seconds` have passed (one pass at least; one pass also warms the cache).
Rate RawRead(const std::vector<std::string>& files, double seconds) {
  std::vector<char> buffer(1 << 20);
  uint64_t bytes = 0, chunks = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    for (const std::string& path : files) {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) Die("cannot open " + path);
      off_t offset = 0;
      while (true) {
        const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), offset);
        if (n <= 0) break;
        offset += n;
        bytes += static_cast<uint64_t>(n);
      }
      auto index = io::IndexTarFile(fd, static_cast<uint64_t>(offset));
      if (index.ok()) chunks += index->members.size();
      ::close(fd);
    }
    elapsed = Seconds(Clock::now() - start);
  } while (elapsed < seconds);
  return {chunks / elapsed, bytes / elapsed / 1e6};
}

std::string FeedConfig(const std::string& dir, unsigned threads,
                       uint64_t pool_size, unsigned readers) {
  return "worker_threads: " + std::to_string(threads) +
         " stage { name: 'files' file_path_provider { directory: '" + dir +
         "' mode: ONCE } }"
         " stage { name: 'loader' input: 'files' chunk_source_loader {} }"
         " stage { name: 'pool' input: 'loader' shuffling_chunk_pool {"
         " chunk_pool_size: " +
         std::to_string(pool_size) +
         " reader_parallelism: " + std::to_string(readers) + " } }";
}

std::unique_ptr<DataLoader> StartFeed(const std::string& config_text) {
  DataLoaderConfig config;
  if (!google::protobuf::TextFormat::ParseFromString(config_text, &config)) {
    Die("bad config");
  }
  auto loader = std::make_unique<DataLoader>(CreateStage);
  loader->Configure(config);
  loader->Start();
  return loader;
}

// Chunks leaving the pool, pulled by this thread for `seconds` after the
// first chunk (start-up excluded).
Rate PoolRate(const std::string& dir, unsigned threads, unsigned readers,
              double seconds) {
  auto loader = StartFeed(FeedConfig(dir, threads, 1'000'000, readers));
  auto first = loader->GetNextFor<lc0::Chunk>("", std::chrono::minutes(5));
  if (first.kind != Channel<lc0::Chunk>::GetResult::Kind::kItem) {
    Die("no chunk from the pool");
  }
  uint64_t chunks = 0, bytes = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (int i = 0; i < 256; ++i) {
      auto next = loader->GetNextFor<lc0::Chunk>("", std::chrono::minutes(1));
      if (next.kind != Channel<lc0::Chunk>::GetResult::Kind::kItem) {
        Die("the pool stopped");
      }
      ++chunks;
      bytes += next.item->data.size();
    }
    elapsed = Seconds(Clock::now() - start);
  }
  loader->Stop();
  return {chunks / elapsed, bytes / elapsed / 1e6};
}

// Seconds from Start() to the first chunk.
double TimeToFirstChunk(const std::string& dir, unsigned threads) {
  const auto start = Clock::now();
  auto loader = StartFeed(FeedConfig(dir, threads, 50'000, 32));
  auto first = loader->GetNextFor<lc0::Chunk>("", std::chrono::minutes(5));
  const double seconds = Seconds(Clock::now() - start);
  if (first.kind != Channel<lc0::Chunk>::GetResult::Kind::kItem) {
    Die("no chunk at start-up");
  }
  loader->Stop();
  return seconds;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  using namespace sluice;
  int games = 4000;
  double seconds = 3;
  unsigned readers = 32;
  int repeat = 3;
  unsigned only_threads = 0;
  bool startup_case = true;
  std::string cache = "/tmp/sluice_chunk_feed_bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--games") {
      games = std::atoi(argv[i + 1]);
    } else if (flag == "--seconds") {
      seconds = std::atof(argv[i + 1]);
    } else if (flag == "--readers") {
      readers = static_cast<unsigned>(std::atoi(argv[i + 1]));
    } else if (flag == "--cache") {
      cache = argv[i + 1];
    } else if (flag == "--repeat") {
      repeat = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--threads") {
      only_threads = static_cast<unsigned>(std::atoi(argv[i + 1]));
    } else if (flag == "--startup") {
      startup_case = std::atoi(argv[i + 1]) != 0;
    } else {
      Die("unknown flag " + flag);
    }
  }
  SetMinLogLevel(LogLevel::kWarning);
  const std::string data = cache + "/games" + std::to_string(games);
  const std::string startup = cache + "/startup_200x500";
  EnsureThroughputData(data, games);
  EnsureStartupData(startup);
  const std::vector<std::string> files = FilesIn(data);
  RawRead(files, 0);  // warm the page cache
  // Raw and pool runs alternate, so that both see the same conditions.
  std::vector<unsigned> thread_counts;
  for (unsigned threads : {1u, 2u}) {
    if (only_threads == 0 || threads == only_threads) {
      thread_counts.push_back(threads);
    }
  }
  Rate raw, raw_single_pass;
  std::vector<Rate> pool(thread_counts.size());
  for (int run = 0; run < repeat; ++run) {
    raw_single_pass = Best(raw_single_pass, RawRead(files, 0));
    raw = Best(raw, RawRead(files, seconds));
    for (size_t t = 0; t < thread_counts.size(); ++t) {
      pool[t] =
          Best(pool[t], PoolRate(data, thread_counts[t], readers, seconds));
    }
  }
  std::printf("%-34s %12s %10s %8s\n", "case", "chunks/s", "MB/s", "of raw");
  std::printf("%-34s %12.0f %10.1f %8s\n", "raw sequential pread (1 thread)",
              raw.chunks_per_second, raw.megabytes_per_second, "100%");
  std::printf(
      "%-34s %12.0f %10.1f %7.0f%%\n", "  (one pass only, a short burst)",
      raw_single_pass.chunks_per_second, raw_single_pass.megabytes_per_second,
      100 * raw_single_pass.megabytes_per_second / raw.megabytes_per_second);
  std::string json =
      "{\"benchmark\":\"chunk_feed\",\"games\":" + std::to_string(games) +
      ",\"readers\":" + std::to_string(readers) +
      ",\"repeat\":" + std::to_string(repeat) +
      ",\"raw_mb_per_s\":" + std::to_string(raw.megabytes_per_second) +
      ",\"raw_single_pass_mb_per_s\":" +
      std::to_string(raw_single_pass.megabytes_per_second);
  for (size_t t = 0; t < thread_counts.size(); ++t) {
    const unsigned threads = thread_counts[t];
    const double share =
        pool[t].megabytes_per_second / raw.megabytes_per_second;
    const std::string label =
        "pool, " + std::to_string(threads) + " worker thread(s)";
    std::printf("%-34s %12.0f %10.1f %7.0f%%\n", label.c_str(),
                pool[t].chunks_per_second, pool[t].megabytes_per_second,
                100 * share);
    json += ",\"pool_t" + std::to_string(threads) +
            "_chunks_per_s\":" + std::to_string(pool[t].chunks_per_second) +
            ",\"pool_t" + std::to_string(threads) +
            "_mb_per_s\":" + std::to_string(pool[t].megabytes_per_second);
  }
  if (!startup_case) {
    std::printf("JSON %s}\n", json.c_str());
    return 0;
  }
  RawRead(FilesIn(startup), 0);  // warm the page cache
  for (unsigned threads : {1u, 2u}) {
    double first = TimeToFirstChunk(startup, threads);
    for (int run = 1; run < repeat; ++run) {
      first = std::min(first, TimeToFirstChunk(startup, threads));
    }
    std::printf(
        "start-up 200x500, pool 50000, %u thread(s): first chunk "
        "after %.3f s\n",
        threads, first);
    json += ",\"startup_t" + std::to_string(threads) +
            "_first_chunk_s\":" + std::to_string(first);
  }
  std::printf("JSON %s}\n", json.c_str());
  return 0;
}
