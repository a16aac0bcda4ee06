#include "bindings/cli/bench_io.h"

#include <cstdio>
#include <memory>
#include <regex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/io_throughput.h"

namespace sluice::cli {
namespace {

constexpr char kUsage[] =
    "usage: sluice bench io PATH... [--json] [--compare-fio]\n"
    "                       [--queue-depth N] [--small-files-limit N]\n"
    "\n"
    "Read throughput of the files under PATH (files or directories), cold\n"
    "(pages evicted with posix_fadvise DONTNEED first) and warm (from the "
    "page\n"
    "cache), for io_uring with many reads in flight, plain pread and mmap,\n"
    "with 64 KiB and 1 MiB blocks; plus small-file mode (open + read + close\n"
    "per file, as files/s) when PATH holds more than one file.\n"
    "\n"
    "  --json               print one JSON object instead of the table\n"
    "  --compare-fio        also run fio's io_uring engine on the largest "
    "file\n"
    "                       (1 MiB blocks, same queue depth, warm) side by "
    "side\n"
    "  --queue-depth N      io_uring reads in flight (default 32)\n"
    "  --small-files-limit N  at most N files in small-file mode (default "
    "20000)\n";

int UsageError(std::ostream& err, absl::string_view message) {
  err << "sluice bench io: " << message << " (see sluice bench io --help)\n";
  return 2;
}

struct Row {
  std::string mode;  // "sequential" or "small-files"
  std::string method;
  uint64_t block_size;  // 0 in small-file mode
  std::string cache;    // "cold" or "warm"
  ReadResult result;
};

std::string BlockName(uint64_t block_size) {
  if (block_size == 0) return "whole";
  if (block_size >= (1 << 20)) return absl::StrCat(block_size >> 20, "MiB");
  return absl::StrCat(block_size >> 10, "KiB");
}

// Runs fio's io_uring engine on `path`; returns GB/s, or an error.
absl::StatusOr<double> RunFio(const std::string& path, unsigned queue_depth) {
  const std::string command = absl::StrCat(
      "fio --name=sluice-compare --filename='", path,
      "' --rw=read --bs=1M --ioengine=io_uring --iodepth=", queue_depth,
      " --direct=0 --numjobs=1 --output-format=json 2>/dev/null");
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"),
                                             pclose);
  if (pipe == nullptr) return absl::UnavailableError("cannot run fio");
  std::string output;
  char buffer[4096];
  while (size_t got = fread(buffer, 1, sizeof(buffer), pipe.get())) {
    output.append(buffer, got);
  }
  std::smatch match;
  static const std::regex kReadBandwidth(
      R"re("read"\s*:\s*\{[^}]*?"bw_bytes"\s*:\s*([0-9]+))re");
  if (!std::regex_search(output, match, kReadBandwidth)) {
    return absl::UnavailableError("could not read fio's JSON output");
  }
  return std::stod(match[1].str()) / 1e9;
}

bool FioInstalled() {
  return std::system("command -v fio >/dev/null 2>&1") == 0;
}

}  // namespace

int RunBenchIo(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(args, {"queue-depth", "small-files-limit"},
                /*switches=*/{"json", "compare-fio"});
  if (!parsed.ok()) return UsageError(err, parsed.status().message());
  if (parsed->help) {
    out << kUsage;
    return 0;
  }
  if (parsed->positional.empty()) return UsageError(err, "expected PATH...");
  const bool json = parsed->flags.contains("json");
  const bool compare_fio = parsed->flags.contains("compare-fio");
  absl::StatusOr<int64_t> depth = IntFlag(*parsed, "queue-depth", 32, 1, 4096);
  absl::StatusOr<int64_t> small_limit =
      IntFlag(*parsed, "small-files-limit", 20000, 1, 100'000'000);
  for (const auto* value : {&depth, &small_limit}) {
    if (!value->ok()) return UsageError(err, value->status().message());
  }
  absl::StatusOr<FileSet> files = CollectFiles(parsed->positional);
  if (!files.ok()) return UsageError(err, files.status().message());
  if (files->paths.empty() || files->total_bytes == 0) {
    return UsageError(err, "no non-empty files under the given paths");
  }

  const bool can_evict = EvictFromPageCache(*files);
  std::vector<Row> rows;
  for (uint64_t block : {uint64_t{64} << 10, uint64_t{1} << 20}) {
    for (ReadMethod method :
         {ReadMethod::kIoUring, ReadMethod::kPread, ReadMethod::kMmap}) {
      for (const char* cache : {"cold", "warm"}) {
        if (std::string(cache) == "cold") {
          if (!can_evict) continue;
          EvictFromPageCache(*files);
        }
        absl::StatusOr<ReadResult> result =
            MeasureRead(*files, method, block, static_cast<unsigned>(*depth));
        if (!result.ok()) {
          err << "sluice bench io: " << ReadMethodName(method) << ": "
              << result.status().message() << "\n";
          return 1;
        }
        rows.push_back(
            {"sequential", ReadMethodName(method), block, cache, *result});
      }
    }
  }
  if (files->paths.size() > 1) {
    FileSet small = *files;
    if (small.paths.size() > static_cast<size_t>(*small_limit)) {
      small.paths.resize(*small_limit);
    }
    for (ReadMethod method : {ReadMethod::kIoUring, ReadMethod::kPread}) {
      for (const char* cache : {"cold", "warm"}) {
        if (std::string(cache) == "cold") {
          if (!can_evict) continue;
          EvictFromPageCache(small);
        }
        absl::StatusOr<ReadResult> result =
            MeasureSmallFiles(small, method, static_cast<unsigned>(*depth));
        if (!result.ok()) {
          err << "sluice bench io: " << result.status().message() << "\n";
          return 1;
        }
        rows.push_back(
            {"small-files", ReadMethodName(method), 0, cache, *result});
      }
    }
  }

  // fio on the largest file, warm, 1 MiB, same depth; sluice beside it.
  std::string fio_note;
  double fio_gbps = -1, sluice_gbps = -1;
  std::string fio_file;
  if (compare_fio) {
    if (!FioInstalled()) {
      fio_note = "fio is not installed (apt-get install fio)";
    } else {
      uint64_t largest = 0;
      for (const std::string& path : files->paths) {
        absl::StatusOr<FileSet> sized = CollectFiles({path});
        if (sized.ok() && sized->total_bytes > largest) {
          largest = sized->total_bytes;
          fio_file = path;
        }
      }
      absl::StatusOr<double> fio = RunFio(fio_file, *depth);
      FileSet one;
      one.paths = {fio_file};
      absl::StatusOr<ReadResult> ours =
          MeasureRead(one, ReadMethod::kIoUring, 1 << 20, *depth);
      if (fio.ok() && ours.ok()) {
        fio_gbps = *fio;
        sluice_gbps = ours->GigabytesPerSecond();
      } else {
        fio_note = std::string(fio.ok() ? ours.status().message()
                                        : fio.status().message());
      }
    }
  }

  if (json) {
    std::string text = absl::StrFormat(
        "{\"files\":%d,\"bytes\":%d,\"queue_depth\":%d,"
        "\"cold_cache_method\":\"%s\",\"results\":[",
        files->paths.size(), files->total_bytes, *depth,
        can_evict ? "posix_fadvise_dontneed" : "unavailable");
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& row = rows[i];
      text += absl::StrFormat(
          "%s{\"mode\":\"%s\",\"method\":\"%s\",\"block_bytes\":%d,"
          "\"cache\":\"%s\",\"bytes\":%d,\"files\":%d,\"seconds\":%.6f,"
          "\"gb_per_s\":%.3f,\"files_per_s\":%.1f}",
          i == 0 ? "" : ",", row.mode, row.method, row.block_size, row.cache,
          row.result.bytes, row.result.files, row.result.seconds,
          row.result.GigabytesPerSecond(), row.result.FilesPerSecond());
    }
    text += "]";
    if (compare_fio) {
      if (fio_gbps >= 0) {
        text += absl::StrFormat(
            ",\"fio\":{\"file\":\"%s\",\"fio_gb_per_s\":%.3f,"
            "\"sluice_gb_per_s\":%.3f,\"ratio\":%.3f}",
            fio_file, fio_gbps, sluice_gbps, sluice_gbps / fio_gbps);
      } else {
        text += absl::StrFormat(",\"fio\":{\"error\":\"%s\"}", fio_note);
      }
    }
    out << text << "}\n";
    return 0;
  }
  out << absl::StrFormat("%d files, %.1f MB, io_uring queue depth %d\n",
                         files->paths.size(), files->total_bytes / 1e6, *depth);
  if (!can_evict) {
    out << "cold cache: not measured (posix_fadvise DONTNEED was refused)\n";
  } else {
    out << "cold cache: pages evicted with posix_fadvise DONTNEED\n";
  }
  out << absl::StrFormat("%-12s %-9s %-6s %-5s %9s %11s\n", "mode", "method",
                         "block", "cache", "GB/s", "files/s");
  for (const Row& row : rows) {
    out << absl::StrFormat("%-12s %-9s %-6s %-5s %9.2f %11.0f\n", row.mode,
                           row.method, BlockName(row.block_size), row.cache,
                           row.result.GigabytesPerSecond(),
                           row.result.FilesPerSecond());
  }
  if (compare_fio) {
    if (fio_gbps >= 0) {
      out << absl::StrFormat(
          "fio vs sluice, io_uring, 1MiB blocks, depth %d, warm, %s:\n"
          "  fio %.2f GB/s, sluice %.2f GB/s (%.0f%%)\n",
          *depth, fio_file, fio_gbps, sluice_gbps,
          100 * sluice_gbps / fio_gbps);
    } else {
      out << "fio comparison: " << fio_note << "\n";
    }
  }
  return 0;
}

}  // namespace sluice::cli
