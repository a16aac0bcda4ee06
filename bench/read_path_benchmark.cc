// Read path benchmark: one case of `sluice bench io --compare-fio` run by
// sluice alone (bindings/cli/fio_comparison.h: the same cache preparation,
// reader job and CPU pinning), so that a profiler or a syscall counter sees
// nothing else:
//
//   perf stat -e 'syscalls:sys_enter_*' out/release/bench/read_path_benchmark \
//       FILE --block 65536 --depth 1 --cache warm --seconds 2
//
// Flags: --block N (default 65536), --depth N (1), --cache warm|cold|direct
// (warm), --seconds N (2; warm and direct), --registered, --default-path
// (cached reads copied inline), --cpu N (the CPU both tools are pinned to
// by the comparison; default the same, -1 for none). Prints GB/s and the
// reads it made (bytes / block), then one JSON line (prefixed "JSON ").
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_format.h"
#include "bindings/cli/fio_comparison.h"
#include "bindings/cli/fio_rounds.h"

namespace sluice {
namespace {

int Usage(const char* why) {
  std::fprintf(stderr,
               "read_path_benchmark: %s\nusage: read_path_benchmark FILE "
               "[--block N] [--depth N] [--cache warm|cold|direct] "
               "[--seconds N] [--registered] [--default-path] [--cpu N]\n",
               why);
  return 2;
}

int Run(int argc, char** argv) {
  if (argc < 2) return Usage("expected FILE");
  cli::FioJob job{.path = argv[1],
                  .block_bytes = 65536,
                  .queue_depth = 1,
                  .cpu = cli::ComparisonCpu()};
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--registered") {
      job.registered = true;
      continue;
    }
    if (flag == "--default-path") {
      job.sluice_default_path = true;
      continue;
    }
    if (i + 1 == argc) return Usage("a flag without its value");
    const std::string value = argv[++i];
    if (flag == "--block") {
      job.block_bytes = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--depth") {
      job.queue_depth = std::atoi(value.c_str());
    } else if (flag == "--seconds") {
      job.seconds = std::atoi(value.c_str());
    } else if (flag == "--cpu") {
      job.cpu = std::atoi(value.c_str());
    } else if (flag == "--cache") {
      if (value == "warm") {
        job.cache = cli::FioCache::kWarm;
      } else if (value == "cold") {
        job.cache = cli::FioCache::kCold;
      } else if (value == "direct") {
        job.cache = cli::FioCache::kDirect;
      } else {
        return Usage("--cache is warm, cold or direct");
      }
    } else {
      return Usage("unknown flag");
    }
  }
  if (job.block_bytes == 0 || job.queue_depth == 0) {
    return Usage("--block and --depth must be positive");
  }
  std::error_code error;
  const uint64_t file_bytes = std::filesystem::file_size(job.path, error);
  if (error) return Usage("cannot stat FILE");
  job.region_bytes = cli::ColdRegionBytes(file_bytes);
  job.passes =
      cli::ColdPasses(job.region_bytes > 0 ? job.region_bytes : file_bytes);
  absl::StatusOr<cli::ReaderResult> result = cli::RunSluiceJob(job);
  if (!result.ok()) {
    std::fprintf(stderr, "read_path_benchmark: %s\n",
                 std::string(result.status().message()).c_str());
    return 1;
  }
  const uint64_t reads = result->bytes / job.block_bytes;
  std::printf("%s %s block %llu depth %u: %.2f GB/s, %llu reads in %.3f s\n",
              cli::FioCacheName(job.cache),
              job.registered            ? "registered"
              : job.sluice_default_path ? "default-path"
                                        : "ring",
              static_cast<unsigned long long>(job.block_bytes), job.queue_depth,
              result->GigabytesPerSecond(),
              static_cast<unsigned long long>(reads), result->seconds);
  std::printf("%s\n", absl::StrFormat(
                          "JSON {\"cache\":\"%s\",\"block_bytes\":%d,"
                          "\"queue_depth\":%d,\"registered\":%s,"
                          "\"default_path\":%s,\"gb_per_s\":%.3f,\"reads\":%d,"
                          "\"seconds\":%.3f}",
                          cli::FioCacheName(job.cache), job.block_bytes,
                          job.queue_depth, job.registered ? "true" : "false",
                          job.sluice_default_path ? "true" : "false",
                          result->GigabytesPerSecond(), reads, result->seconds)
                          .c_str());
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Run(argc, argv); }
