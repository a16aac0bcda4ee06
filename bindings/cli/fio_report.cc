#include "bindings/cli/fio_report.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "asio/io_context.hpp"
#include "bindings/cli/fio_comparison.h"
#include "bindings/cli/io_throughput.h"
#include "io/aligned_buffer.h"
#include "io/async_file_reader.h"
#include "io/direct_file.h"

namespace sluice::cli {
namespace {

// Why O_DIRECT reads of `path` cannot be compared, or empty.
std::string DirectUnavailable(const std::string& path) {
  absl::StatusOr<io::ReadableFile> opened = io::OpenForReading(path, true);
  if (!opened.ok()) return std::string(opened.status().message());
  close(opened->fd);
  return opened->refusal;
}

// Why registered buffers of `bytes` cannot be used here, or empty.
std::string RegisteredUnavailable(uint64_t bytes) {
  asio::io_context io;
  io::AsyncFileReader reader(io, {.rings = 1});
  if (!reader.uses_io_uring()) {
    return absl::StrCat("io_uring unavailable: ", reader.fallback_reason());
  }
  io::AlignedBuffer region(bytes);
  absl::StatusOr<io::AsyncFileReader::Registration> registration =
      reader.RegisterBuffer(region.span());
  if (!registration.ok()) return std::string(registration.status().message());
  return {};
}

std::string SpreadText(const Spread& spread) {
  return absl::StrFormat("%.2f (%.2f-%.2f)", spread.median, spread.low,
                         spread.high);
}

std::string SpreadJson(const Spread& spread) {
  return absl::StrFormat("{\"median\":%.3f,\"low\":%.3f,\"high\":%.3f}",
                         spread.median, spread.low, spread.high);
}

}  // namespace

FioComparisonReport RunFioComparison(const std::string& path,
                                     unsigned queue_depth, int seconds,
                                     int rounds, bool can_evict,
                                     std::vector<std::string> only) {
  FioComparisonReport report;
  report.rounds = rounds;
  FioCaseSettings& settings = report.settings;
  settings.path = path;
  settings.queue_depth = queue_depth;
  settings.seconds = seconds;
  settings.only = std::move(only);
  std::error_code size_error;
  settings.file_bytes = std::filesystem::file_size(path, size_error);
  if (!FioInstalled()) {
    report.error = "fio is not installed (apt-get install fio)";
    return report;
  }
  settings.cpu = ComparisonCpu();
  settings.cold = can_evict;
  if (!can_evict) {
    report.skipped.push_back("cold: the kernel refuses to drop pages");
  }
  if (const std::string why = DirectUnavailable(path); !why.empty()) {
    settings.direct = false;
    report.skipped.push_back(absl::StrCat("direct: ", why));
  }
  if (const std::string why =
          RegisteredUnavailable(uint64_t{queue_depth} << 20);
      !why.empty()) {
    settings.registered = false;
    report.skipped.push_back(absl::StrCat("registered: ", why));
  }
  for (const uint64_t block : {uint64_t{1} << 20, uint64_t{64} << 10}) {
    if (block > settings.file_bytes) {
      report.skipped.push_back(
          absl::StrFormat("%s blocks: the largest file has only %d bytes",
                          BlockName(block), settings.file_bytes));
    }
  }
  FioComparison comparison = CompareWithFio(FioCases(settings), rounds);
  report.results = std::move(comparison.results);
  report.error = std::move(comparison.error);
  if (!report.error.empty()) report.results.clear();
  return report;
}

std::string FioComparisonReport::Table() const {
  if (!error.empty()) return absl::StrCat("fio comparison: ", error, "\n");
  const uint64_t cold_region = ColdRegionBytes(settings.file_bytes);
  const int passes =
      ColdPasses(cold_region > 0 ? cold_region : settings.file_bytes);
  std::string text = absl::StrFormat(
      "fio vs sluice on %s: io_uring, whole blocks, both pinned to CPU %d, "
      "median (range) of %d rounds\n"
      "  cold: %d pass%s over %s, the file opened and its pages dropped at "
      "the start of each pass inside each tool's clock\n"
      "  warm: read once first, then %d s each from the page cache; direct: "
      "O_DIRECT for %d s\n"
      "  registered: fio --fixedbufs --registerfiles, sluice's registered "
      "buffers and file\n"
      "  sluice default path: what the page cache holds copied at once "
      "(preadv2), the rest through the ring; fio as in the plain case\n",
      settings.path, settings.cpu, rounds, passes, passes == 1 ? "" : "es",
      cold_region > 0 ? absl::StrCat("its first ", cold_region >> 20, " MiB")
                      : std::string("the whole file"),
      settings.seconds, settings.seconds);
  text += absl::StrFormat("%-6s %5s %-18s %-19s %-19s %s\n", "block", "depth",
                          "case", "fio GB/s", "sluice GB/s", "sluice/fio");
  for (const FioCaseResult& result : results) {
    const Spread ratio = SpreadOf(result.ratios);
    text +=
        absl::StrFormat("%-6s %5d %-18s %-19s %-19s %.0f%% (%.0f-%.0f)\n",
                        BlockName(result.fio_case.job.block_bytes),
                        result.fio_case.job.queue_depth, result.fio_case.label,
                        SpreadText(SpreadOf(result.fio_gbps)),
                        SpreadText(SpreadOf(result.sluice_gbps)),
                        100 * ratio.median, 100 * ratio.low, 100 * ratio.high);
  }
  for (const std::string& skipped : skipped) {
    text += absl::StrCat("not compared: ", skipped, "\n");
  }
  return text;
}

std::string FioComparisonReport::Json() const {
  if (!error.empty()) {
    return absl::StrFormat("{\"error\":\"%s\"}", error);
  }
  std::vector<std::string> cases;
  for (const FioCaseResult& result : results) {
    const FioJob& job = result.fio_case.job;
    cases.push_back(absl::StrFormat(
        "{\"block_bytes\":%d,\"queue_depth\":%d,\"case\":\"%s\","
        "\"cache\":\"%s\",\"registered\":%s,\"sluice_default_path\":%s,"
        "\"passes\":%d,\"seconds\":%d,\"fio_gb_per_s\":%s,"
        "\"sluice_gb_per_s\":%s,\"ratio\":%s}",
        job.block_bytes, job.queue_depth, result.fio_case.label,
        FioCacheName(job.cache), job.registered ? "true" : "false",
        job.sluice_default_path ? "true" : "false",
        job.cache == FioCache::kCold ? job.passes : 0,
        job.cache == FioCache::kCold ? 0 : job.seconds,
        SpreadJson(SpreadOf(result.fio_gbps)),
        SpreadJson(SpreadOf(result.sluice_gbps)),
        SpreadJson(SpreadOf(result.ratios))));
  }
  std::vector<std::string> quoted;
  for (const std::string& note : skipped) {
    quoted.push_back(absl::StrCat("\"", note, "\""));
  }
  return absl::StrFormat(
      "{\"file\":\"%s\",\"cpu\":%d,\"rounds\":%d,\"cases\":[%s],"
      "\"skipped\":[%s]}",
      settings.path, settings.cpu, rounds, absl::StrJoin(cases, ","),
      absl::StrJoin(quoted, ","));
}

}  // namespace sluice::cli
