#include "bindings/cli/bench_io.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "bindings/cli/arrow_data.h"
#include "bindings/cli/fio_comparison.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/io_throughput.h"

namespace sluice::cli {
namespace {

constexpr char kBenchIoUsage[] =
    "usage: sluice bench io PATH... [--json] [--compare-fio]\n"
    "                       [--queue-depth N] [--small-files-limit N]\n"
    "                       [--small-file-max-bytes N] [--fio-seconds N]\n"
    "                       [--fio-rounds N]\n"
    "\n"
    "Read throughput of the files under PATH (files or directories), cold\n"
    "(pages evicted with posix_fadvise DONTNEED first) and warm (from the "
    "page\n"
    "cache), for io_uring with many reads in flight, plain pread and mmap,\n"
    "with 64 KiB and 1 MiB blocks; plus small-file mode (open + read + close\n"
    "per file, as files/s) over the files of at most --small-file-max-bytes.\n"
    "\n"
    "  --json               print one JSON object instead of the table\n"
    "  --compare-fio        also run fio's io_uring engine and sluice's "
    "reader\n"
    "                       on the largest file, like for like: 1 MiB blocks "
    "at\n"
    "                       the queue depth and 64 KiB blocks at depth 1, "
    "cold\n"
    "                       (pages dropped, one pass each) and warm (both "
    "read\n"
    "                       for --fio-seconds from the page cache)\n"
    "  --queue-depth N      io_uring reads in flight (default 32)\n"
    "  --small-files-limit N  at most N files in small-file mode (default "
    "20000)\n"
    "  --small-file-max-bytes N  small-file mode reads only files of at most\n"
    "                       N bytes (default 1048576)\n"
    "  --fio-seconds N      length of each warm comparison run (default 2)\n"
    "  --fio-rounds N       fio and sluice take turns N times per case; the\n"
    "                       best of each is shown (default 3)\n";

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

// One line of the fio comparison.
struct FioRow {
  FioJob job;
  double fio_gbps = 0;
  double sluice_gbps = 0;
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
                 "fio-seconds", "fio-rounds"},
                /*switches=*/{"json", "compare-fio"});
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
  absl::StatusOr<int64_t> depth = IntFlag(*parsed, "queue-depth", 32, 1, 4096);
  absl::StatusOr<int64_t> small_limit =
      IntFlag(*parsed, "small-files-limit", 20000, 1, 100'000'000);
  absl::StatusOr<int64_t> small_max_bytes =
      IntFlag(*parsed, "small-file-max-bytes", 1 << 20, 1, int64_t{1} << 40);
  absl::StatusOr<int64_t> fio_seconds =
      IntFlag(*parsed, "fio-seconds", 2, 1, 3600);
  absl::StatusOr<int64_t> fio_rounds =
      IntFlag(*parsed, "fio-rounds", 3, 1, 100);
  for (const auto* value :
       {&depth, &small_limit, &small_max_bytes, &fio_seconds, &fio_rounds}) {
    if (!value->ok())
      return UsageError(err, "bench io", value->status().message());
  }
  absl::StatusOr<FileSet> files = CollectFiles(parsed->positional);
  if (!files.ok()) return UsageError(err, "bench io", files.status().message());
  if (files->paths.empty() || files->total_bytes == 0) {
    return UsageError(err, "bench io",
                      "no non-empty files under the given paths");
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
  std::string fio_note;
  std::vector<FioRow> fio_rows;
  std::vector<std::string> fio_skipped;  // cases not run, and why
  const std::string fio_file = LargestFile(*files);
  std::error_code size_error;
  const uint64_t fio_file_bytes =
      std::filesystem::file_size(fio_file, size_error);
  if (compare_fio) {
    if (!FioInstalled()) {
      fio_note = "fio is not installed (apt-get install fio)";
    } else {
      for (const auto& [block, queue_depth] :
           {std::pair<uint64_t, unsigned>{uint64_t{1} << 20,
                                          static_cast<unsigned>(*depth)},
            std::pair<uint64_t, unsigned>{uint64_t{64} << 10, 1}}) {
        if (block > fio_file_bytes) {
          fio_skipped.push_back(
              absl::StrFormat("%s blocks: the largest file has only %d bytes",
                              BlockName(block), fio_file_bytes));
          continue;
        }
        for (const bool warm : {false, true}) {
          if (!warm && !can_evict) continue;
          FioRow row{.job = {.path = fio_file,
                             .block_bytes = block,
                             .queue_depth = queue_depth,
                             .warm = warm,
                             .seconds = static_cast<int>(*fio_seconds),
                             .passes = ColdPasses(fio_file_bytes)}};
          // fio and sluice take turns; the best round of each is kept.
          for (int round = 0; round < *fio_rounds && fio_note.empty();
               ++round) {
            absl::StatusOr<double> fio = RunFio(row.job);
            absl::StatusOr<double> ours = RunSluice(row.job);
            if (!fio.ok() || !ours.ok()) {
              fio_note = std::string(fio.ok() ? ours.status().message()
                                              : fio.status().message());
              break;
            }
            row.fio_gbps = std::max(row.fio_gbps, *fio);
            row.sluice_gbps = std::max(row.sluice_gbps, *ours);
          }
          if (!fio_note.empty()) {
            fio_rows.clear();
            break;
          }
          fio_rows.push_back(row);
        }
        if (!fio_note.empty()) break;
      }
    }
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
    if (compare_fio) {
      if (!fio_rows.empty()) {
        text +=
            absl::StrFormat(",\"fio\":{\"file\":\"%s\",\"runs\":[", fio_file);
        for (size_t i = 0; i < fio_rows.size(); ++i) {
          const FioRow& row = fio_rows[i];
          text += absl::StrFormat(
              "%s{\"block_bytes\":%d,\"queue_depth\":%d,\"cache\":\"%s\","
              "\"passes\":%d,\"seconds\":%d,\"rounds\":%d,\"fio_gb_per_s\":%."
              "3f,"
              "\"sluice_gb_per_s\":%.3f,\"ratio\":%.3f}",
              i == 0 ? "" : ",", row.job.block_bytes, row.job.queue_depth,
              row.job.warm ? "warm" : "cold", row.job.warm ? 0 : row.job.passes,
              row.job.warm ? row.job.seconds : 0, *fio_rounds, row.fio_gbps,
              row.sluice_gbps, row.sluice_gbps / row.fio_gbps);
        }
        text += "],\"skipped\":[";
        for (size_t i = 0; i < fio_skipped.size(); ++i) {
          text +=
              absl::StrFormat("%s\"%s\"", i == 0 ? "" : ",", fio_skipped[i]);
        }
        text += "]}";
      } else {
        text += absl::StrFormat(",\"fio\":{\"error\":\"%s\"}", fio_note);
      }
    }
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
  if (compare_fio) {
    if (!fio_rows.empty()) {
      out << absl::StrFormat(
          "fio vs sluice on %s, io_uring, buffered reads, best of %d "
          "alternating rounds\n"
          "(cold: %d passes each, pages dropped before every pass; warm: "
          "read once first, then %ds each from the page cache)\n",
          fio_file, *fio_rounds, ColdPasses(fio_file_bytes), *fio_seconds);
      out << absl::StrFormat("%-6s %5s %-5s %9s %12s %11s\n", "block", "depth",
                             "cache", "fio GB/s", "sluice GB/s", "sluice/fio");
      for (const FioRow& row : fio_rows) {
        out << absl::StrFormat(
            "%-6s %5d %-5s %9.2f %12.2f %10.0f%%\n",
            BlockName(row.job.block_bytes), row.job.queue_depth,
            row.job.warm ? "warm" : "cold", row.fio_gbps, row.sluice_gbps,
            100 * row.sluice_gbps / row.fio_gbps);
      }
      for (const std::string& skipped : fio_skipped) {
        out << "not compared: " << skipped << "\n";
      }
    } else {
      out << "fio comparison: " << fio_note << "\n";
    }
  }
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
