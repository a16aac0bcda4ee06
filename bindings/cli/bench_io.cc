#include "bindings/cli/bench_io.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "bindings/cli/arrow_data.h"
#include "bindings/cli/fio_report.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/io_throughput.h"

namespace sluice::cli {
namespace {

constexpr char kBenchIoUsage[] =
    "usage: sluice bench io PATH... [--json] [--compare-fio] [--direct]\n"
    "                       [--queue-depth N] [--small-files-limit N]\n"
    "                       [--small-file-max-bytes N] [--fio-seconds N]\n"
    "                       [--fio-rounds N] [--fio-cases LIST]\n"
    "\n"
    "Read throughput of the files under PATH (files or directories), cold\n"
    "(pages evicted with posix_fadvise DONTNEED first) and warm (from the "
    "page\n"
    "cache), for io_uring with many reads in flight, plain pread and mmap,\n"
    "with 64 KiB and 1 MiB blocks; plus small-file mode (open + read + close\n"
    "per file, as files/s) over the files of at most --small-file-max-bytes.\n"
    "\n"
    "  --json               print one JSON object instead of the table\n"
    "  --direct             also read with O_DIRECT (io_uring and pread;\n"
    "                       files whose file system refuses it are read\n"
    "                       buffered, counted in a warning)\n"
    "  --compare-fio        also run fio's io_uring engine and sluice's "
    "reader\n"
    "                       on the largest file, like for like (whole "
    "blocks,\n"
    "                       same fadvise and eviction, both pinned to one "
    "CPU):\n"
    "                       1 MiB blocks at the queue depth and 64 KiB at "
    "depth\n"
    "                       1; cold, warm, O_DIRECT, registered buffers, and\n"
    "                       sluice's default path (cached reads copied "
    "inline)\n"
    "  --queue-depth N      io_uring reads in flight (default 32)\n"
    "  --small-files-limit N  at most N files in small-file mode (default "
    "20000)\n"
    "  --small-file-max-bytes N  small-file mode reads only files of at most\n"
    "                       N bytes (default 1048576)\n"
    "  --fio-seconds N      length of each warm and direct comparison run\n"
    "                       (default 2)\n"
    "  --fio-rounds N       rounds of the comparison: every case by both "
    "tools\n"
    "                       in every round; median and range shown (default "
    "5)\n"
    "  --fio-cases LIST     only these comparison cases (comma-separated:\n"
    "                       cold, warm, direct, warm-registered,\n"
    "                       direct-registered, warm-default-path,\n"
    "                       cold-default-path; default all)\n";

struct Row {
  std::string mode;  // "sequential" or "small-files"
  std::string method;
  uint64_t block_size;  // 0 in small-file mode
  std::string cache;    // "cold" or "warm"
  ReadResult result;
};

// The largest of `files`.
std::string LargestFile(const FileSet& files) {
  std::string largest;
  uint64_t largest_bytes = 0;
  for (const std::string& path : files.paths) {
    std::error_code error;
    const uint64_t bytes = std::filesystem::file_size(path, error);
    if (!error && (largest.empty() || bytes > largest_bytes)) {
      largest = path;
      largest_bytes = bytes;
    }
  }
  return largest;
}

// The files of at most `max_bytes`.
FileSet SmallFiles(const FileSet& files, uint64_t max_bytes) {
  FileSet small;
  for (const std::string& path : files.paths) {
    std::error_code error;
    const uint64_t bytes = std::filesystem::file_size(path, error);
    if (!error && bytes <= max_bytes) {
      small.paths.push_back(path);
      small.total_bytes += bytes;
    }
  }
  return small;
}

}  // namespace

int RunBenchIo(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(args,
                {"queue-depth", "small-files-limit", "small-file-max-bytes",
                 "fio-seconds", "fio-rounds", "fio-cases"},
                /*switches=*/{"json", "compare-fio", "direct"});
  if (!parsed.ok())
    return UsageError(err, "bench io", parsed.status().message());
  if (parsed->help) {
    out << kBenchIoUsage;
    return 0;
  }
  if (parsed->positional.empty())
    return UsageError(err, "bench io", "expected PATH...");
  const bool json = parsed->flags.contains("json");
  const bool compare_fio = parsed->flags.contains("compare-fio");
  const bool direct = parsed->flags.contains("direct");
  absl::StatusOr<int64_t> depth = IntFlag(*parsed, "queue-depth", 32, 1, 4096);
  absl::StatusOr<int64_t> small_limit =
      IntFlag(*parsed, "small-files-limit", 20000, 1, 100'000'000);
  absl::StatusOr<int64_t> small_max_bytes =
      IntFlag(*parsed, "small-file-max-bytes", 1 << 20, 1, int64_t{1} << 40);
  absl::StatusOr<int64_t> fio_seconds =
      IntFlag(*parsed, "fio-seconds", 2, 1, 3600);
  absl::StatusOr<int64_t> fio_rounds =
      IntFlag(*parsed, "fio-rounds", 5, 1, 100);
  for (const auto* value :
       {&depth, &small_limit, &small_max_bytes, &fio_seconds, &fio_rounds}) {
    if (!value->ok())
      return UsageError(err, "bench io", value->status().message());
  }
  std::vector<std::string> fio_cases;
  if (auto it = parsed->flags.find("fio-cases"); it != parsed->flags.end()) {
    fio_cases = absl::StrSplit(it->second, ',', absl::SkipEmpty());
    for (const std::string& name : fio_cases) {
      if (std::find(FioCaseNames().begin(), FioCaseNames().end(), name) ==
          FioCaseNames().end()) {
        return UsageError(
            err, "bench io",
            absl::StrCat("unknown --fio-cases case '", name, "' (one of ",
                         absl::StrJoin(FioCaseNames(), ", "), ")"));
      }
    }
  }
  absl::StatusOr<FileSet> files = CollectFiles(parsed->positional);
  if (!files.ok()) return UsageError(err, "bench io", files.status().message());
  if (files->paths.empty() || files->total_bytes == 0) {
    return UsageError(err, "bench io",
                      "no non-empty files under the given paths");
  }

  const bool can_evict = EvictFromPageCache(*files);
  std::vector<Row> rows;
  // Files O_DIRECT was refused for (read buffered instead), and why.
  uint64_t direct_refused = 0;
  std::string direct_refusal;
  for (uint64_t block : {uint64_t{64} << 10, uint64_t{1} << 20}) {
    for (ReadMethod method :
         {ReadMethod::kIoUring, ReadMethod::kPread, ReadMethod::kMmap}) {
      for (const char* cache : {"cold", "warm", "direct"}) {
        const std::string_view name = cache;
        if (name == "direct" && (!direct || method == ReadMethod::kMmap)) {
          continue;
        }
        if (name != "warm") {
          if (!can_evict && name == "cold") continue;
          EvictFromPageCache(*files);
        }
        absl::StatusOr<ReadResult> result =
            MeasureRead(*files, method, block, static_cast<unsigned>(*depth),
                        /*direct=*/name == "direct");
        if (!result.ok()) {
          err << "sluice bench io: " << ReadMethodName(method) << ": "
              << result.status().message() << "\n";
          return 1;
        }
        if (result->direct_refused > 0) {
          direct_refused = result->direct_refused;
          direct_refusal = result->refusal;
        }
        rows.push_back(
            {"sequential", ReadMethodName(method), block, cache, *result});
      }
    }
  }
  if (direct_refused > 0) {
    err << absl::StrFormat(
        "sluice bench io: warning: O_DIRECT refused for %d of %d files (%s); "
        "their \"direct\" rows read them buffered\n",
        direct_refused, files->paths.size(), direct_refusal);
  }
  const FileSet small = SmallFiles(*files, *small_max_bytes);
  std::string small_note;
  if (small.paths.empty()) {
    small_note = absl::StrFormat(
        "small-files: not measured, none of the %d files is at most %d bytes "
        "(--small-file-max-bytes)",
        files->paths.size(), *small_max_bytes);
  } else {
    FileSet measured = small;
    if (measured.paths.size() > static_cast<size_t>(*small_limit)) {
      measured.paths.resize(*small_limit);
    }
    small_note = absl::StrFormat("small-files: %d files of at most %d bytes",
                                 measured.paths.size(), *small_max_bytes);
    for (ReadMethod method : {ReadMethod::kIoUring, ReadMethod::kPread}) {
      for (const char* cache : {"cold", "warm"}) {
        if (std::string(cache) == "cold") {
          if (!can_evict) continue;
          EvictFromPageCache(measured);
        }
        absl::StatusOr<ReadResult> result =
            MeasureSmallFiles(measured, method, static_cast<unsigned>(*depth));
        if (!result.ok()) {
          err << "sluice bench io: " << result.status().message() << "\n";
          return 1;
        }
        rows.push_back(
            {"small-files", ReadMethodName(method), 0, cache, *result});
      }
    }
  }

  // fio and sluice on the largest file, like for like (fio_comparison.h).
  std::optional<FioComparisonReport> fio_report;
  if (compare_fio) {
    fio_report = RunFioComparison(
        LargestFile(*files), static_cast<unsigned>(*depth),
        static_cast<int>(*fio_seconds), static_cast<int>(*fio_rounds),
        can_evict, std::move(fio_cases));
  }

  // Arrow IPC files among them: every record batch read through
  // ArrowFileReader, warm (a first pass fills the page cache).
  std::vector<std::string> arrow_paths;
  for (const std::string& path : files->paths) {
    if (IsArrowFile(path)) arrow_paths.push_back(path);
  }
  std::optional<ArrowReadResult> arrow_read;
  std::string arrow_note;
  if (!arrow_paths.empty()) {
    (void)MeasureArrowRead(arrow_paths);
    absl::StatusOr<ArrowReadResult> read = MeasureArrowRead(arrow_paths);
    if (read.ok()) {
      arrow_read = *read;
    } else {
      arrow_note = std::string(read.status().message());
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
    text += absl::StrFormat(",\"small_files\":{\"max_bytes\":%d,\"files\":%d}",
                            *small_max_bytes, small.paths.size());
    if (fio_report) text += absl::StrCat(",\"fio\":", fio_report->Json());
    if (arrow_read) {
      text += absl::StrFormat(
          ",\"arrow\":{\"files\":%d,\"rows\":%d,\"record_batches\":%d,"
          "\"bytes\":%d,\"seconds\":%.6f,\"rows_per_s\":%.1f,"
          "\"gb_per_s\":%.3f}",
          arrow_paths.size(), arrow_read->rows, arrow_read->record_batches,
          arrow_read->bytes, arrow_read->seconds, arrow_read->RowsPerSecond(),
          arrow_read->GigabytesPerSecond());
    } else if (!arrow_note.empty()) {
      text += absl::StrFormat(",\"arrow\":{\"error\":\"%s\"}", arrow_note);
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
  out << small_note << "\n";
  if (fio_report) out << fio_report->Table();
  if (arrow_read) {
    out << absl::StrFormat(
        "arrow: %d files, %d rows in %d record batches through "
        "ArrowFileReader, warm: %.0f rows/s, %.2f GB/s\n",
        arrow_paths.size(), arrow_read->rows, arrow_read->record_batches,
        arrow_read->RowsPerSecond(), arrow_read->GigabytesPerSecond());
  } else if (!arrow_note.empty()) {
    out << "arrow: " << arrow_note << "\n";
  }
  return 0;
}

}  // namespace sluice::cli
