#include "bench/cache_line_probe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/worker_placement.h"

namespace sluice::bench {

std::optional<double> CacheLineTransferNanoseconds(int first_cpu,
                                                   int second_cpu,
                                                   int round_trips) {
  // The line both threads write: odd values are the first thread's turn
  // done, even ones the second's; -1 tells the second thread to give up.
  alignas(64) std::atomic<int64_t> line{0};
  std::atomic<bool> pinned_both{true};
  std::latch ready(2);
  std::thread second([&] {
    if (!PinCurrentThread(second_cpu)) pinned_both = false;
    ready.arrive_and_wait();
    if (!pinned_both) return;
    for (int64_t i = 0; i < round_trips; ++i) {
      while (line.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.store(2 * i + 2, std::memory_order_release);
    }
  });
  double nanoseconds = 0;
  std::thread first([&] {
    if (!PinCurrentThread(first_cpu)) pinned_both = false;
    ready.arrive_and_wait();
    if (!pinned_both) return;
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < round_trips; ++i) {
      line.store(2 * i + 1, std::memory_order_release);
      while (line.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    nanoseconds = std::chrono::duration<double, std::nano>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  });
  first.join();
  second.join();
  if (!pinned_both) return std::nullopt;
  return nanoseconds / (2.0 * round_trips);
}

std::optional<double> CacheLineTransferOfFirstTwoCpus() {
  const std::vector<int> cpus = AllowedCpus();
  if (cpus.size() < 2) return std::nullopt;
  return CacheLineTransferNanoseconds(cpus[0], cpus[1]);
}

std::string ProbeText(std::optional<double> nanoseconds) {
  return nanoseconds ? absl::StrFormat("%.0f", *nanoseconds) : "-";
}

std::string ProbeRange::Text() const {
  return absl::StrCat(ProbeText(min_ns), "-", ProbeText(max_ns));
}

ProbeRange RangeOf(const std::vector<double>& probes_ns) {
  if (probes_ns.empty()) return {};
  const auto [low, high] =
      std::minmax_element(probes_ns.begin(), probes_ns.end());
  return {.min_ns = *low, .max_ns = *high};
}

}  // namespace sluice::bench
