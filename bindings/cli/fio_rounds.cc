#include "bindings/cli/fio_rounds.h"

#include <sched.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bindings/cli/deadline_watchdog.h"

namespace sluice::cli {

Spread SpreadOf(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median =
      n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return {.median = median, .low = values.front(), .high = values.back()};
}

const std::vector<std::string>& FioCaseNames() {
  static const std::vector<std::string> names = {"cold",
                                                 "warm",
                                                 "direct",
                                                 "warm-registered",
                                                 "direct-registered",
                                                 "warm-default-path",
                                                 "cold-default-path"};
  return names;
}

absl::Duration FioCaseDeadline(const FioJob& job, uint64_t cold_bytes) {
  constexpr double kSlowDiskBytesPerSecond = 4e6;
  const absl::Duration timed =
      job.cache == FioCache::kCold
          ? absl::Seconds(static_cast<double>(cold_bytes) /
                          kSlowDiskBytesPerSecond)
          : absl::Seconds(job.seconds);
  return timed + absl::Minutes(1);
}

std::vector<FioCase> FioCases(const FioCaseSettings& settings) {
  std::vector<FioCase> cases;
  const uint64_t cold_region = ColdRegionBytes(settings.file_bytes);
  const int cold_passes =
      ColdPasses(cold_region > 0 ? cold_region : settings.file_bytes);
  for (const auto& [block, depth] :
       {std::pair<uint64_t, unsigned>{uint64_t{1} << 20, settings.queue_depth},
        std::pair<uint64_t, unsigned>{uint64_t{64} << 10, 1}}) {
    if (block > settings.file_bytes) continue;
    const FioJob base{.path = settings.path,
                      .block_bytes = block,
                      .queue_depth = depth,
                      .seconds = settings.seconds,
                      .passes = cold_passes,
                      .region_bytes = cold_region,
                      .cpu = settings.cpu};
    auto add = [&](FioCache cache, bool registered, bool default_path,
                   std::string label) {
      if (!settings.only.empty() &&
          std::find(settings.only.begin(), settings.only.end(), label) ==
              settings.only.end()) {
        return;
      }
      FioJob job = base;
      job.cache = cache;
      job.registered = registered;
      job.sluice_default_path = default_path;
      const absl::Duration deadline = FioCaseDeadline(
          job, static_cast<uint64_t>(cold_passes) *
                   (cold_region > 0 ? cold_region : settings.file_bytes));
      cases.push_back({std::move(job), std::move(label), deadline});
    };
    if (settings.cold) add(FioCache::kCold, false, false, "cold");
    add(FioCache::kWarm, false, false, "warm");
    if (settings.direct) add(FioCache::kDirect, false, false, "direct");
    if (settings.registered) {
      add(FioCache::kWarm, true, false, "warm-registered");
      if (settings.direct) {
        add(FioCache::kDirect, true, false, "direct-registered");
      }
    }
    add(FioCache::kWarm, false, true, "warm-default-path");
    if (settings.cold) add(FioCache::kCold, false, true, "cold-default-path");
  }
  return cases;
}

FioComparison CompareWithFio(const std::vector<FioCase>& cases, int rounds) {
  FioComparison comparison;
  for (const FioCase& fio_case : cases) {
    comparison.results.push_back({.fio_case = fio_case});
  }
  for (int round = 0; round < rounds; ++round) {
    for (size_t c = 0; c < cases.size(); ++c) {
      FioCaseResult& result = comparison.results[c];
      const bool fio_first = (round + c) % 2 == 0;
      absl::StatusOr<double> fio;
      absl::StatusOr<double> ours;
      const auto run = [&](const char* tool, auto measure) {
        const DeadlineWatchdog watchdog(
            absl::StrCat("bench io --compare-fio: case '", cases[c].label,
                         "' (", cases[c].job.block_bytes, " B blocks) by ",
                         tool),
            cases[c].deadline);
        return measure(cases[c].job);
      };
      if (fio_first) fio = run("fio", RunFio);
      ours = run("sluice", RunSluice);
      if (!fio_first) fio = run("fio", RunFio);
      if (!fio.ok() || !ours.ok()) {
        const absl::Status& failed = fio.ok() ? ours.status() : fio.status();
        comparison.error =
            absl::StrCat(cases[c].label, " (", cases[c].job.block_bytes,
                         " B): ", failed.message());
        return comparison;
      }
      result.fio_gbps.push_back(*fio);
      result.sluice_gbps.push_back(*ours);
      result.ratios.push_back(*fio > 0 ? *ours / *fio : 0);
    }
  }
  return comparison;
}

int ComparisonCpu() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return -1;
  for (int cpu = CPU_SETSIZE - 1; cpu >= 0; --cpu) {
    if (CPU_ISSET(cpu, &allowed)) return cpu;
  }
  return -1;
}

}  // namespace sluice::cli
