// CacheLineTransferNanoseconds: how far apart the host runs two CPUs at
// this moment. On a VM the guest sees one L3 either way, but the host may
// run two vCPUs on cores that share a cache (one-way transfer of a cache
// line: about 40-60 ns on the 2-core EPYC VM) or on cores that do not
// (110-210 ns); pipelines that hand data between threads slow down in the
// second case and loops that do not stay put (docs/performance.md). The
// benchmarks print it beside their rounds, so that a slow round says
// whether the placement changed.
//
//   std::optional<double> ns = bench::CacheLineTransferNanoseconds(0, 1);
//   std::printf("probe %s ns\n", bench::ProbeText(ns).c_str());
#ifndef SLUICE_BENCH_CACHE_LINE_PROBE_H_
#define SLUICE_BENCH_CACHE_LINE_PROBE_H_

#include <optional>
#include <string>
#include <vector>

namespace sluice::bench {

// The mean one-way time, in nanoseconds, for one cache line to pass
// between a thread pinned to `first_cpu` and one pinned to `second_cpu`,
// over `round_trips` round trips (about 10-40 ms with the default); nullopt
// when either CPU cannot be pinned. The calling thread stays as it was.
std::optional<double> CacheLineTransferNanoseconds(int first_cpu,
                                                   int second_cpu,
                                                   int round_trips = 100'000);

// CacheLineTransferNanoseconds between the first two CPUs this process
// may use; nullopt with fewer than two CPUs or pinning refused.
std::optional<double> CacheLineTransferOfFirstTwoCpus();

// `nanoseconds` for a table: "53", or "-" for nullopt.
std::string ProbeText(std::optional<double> nanoseconds);

// The lowest and highest of several probes (both nullopt for none).
struct ProbeRange {
  std::optional<double> min_ns;
  std::optional<double> max_ns;
  // For a table: "42-213", or "---" for none.
  std::string Text() const;
};

// The range of `probes_ns`.
ProbeRange RangeOf(const std::vector<double>& probes_ns);

}  // namespace sluice::bench

#endif  // SLUICE_BENCH_CACHE_LINE_PROBE_H_
