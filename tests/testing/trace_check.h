// Checks a trace file against the Trace Event Format (the JSON that
// Perfetto UI and chrome://tracing open) and sums what it shows, for the
// tests of tracing (DataLoaderConfig.trace).
//
//   const TraceSummary trace = CheckTrace(path);  // gtest failures if bad
//   EXPECT_NEAR(trace.busy_seconds.at("decoder"), busy, 0.1 * busy);
#ifndef SLUICE_TESTS_TESTING_TRACE_CHECK_H_
#define SLUICE_TESTS_TESTING_TRACE_CHECK_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace sluice::testing {

struct TraceSummary {
  // Events other than metadata ("M").
  uint64_t events = 0;
  // Complete events by category ("busy", "output", "io", "checkpoint").
  std::map<std::string, uint64_t> spans;
  // Seconds of "busy" spans, by stage (the span's name).
  std::map<std::string, double> busy_seconds;
  // Seconds of "busy" spans by thread (pid, tid), and threads' names.
  std::map<std::pair<int64_t, int64_t>, double> thread_busy_seconds;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  // Counter events ("C"); by counter ("NAME KEY"), the largest value it
  // showed and its integral over time (value-seconds, each value held
  // until the counter's next one).
  uint64_t counters = 0;
  std::map<std::string, double> counter_max;
  std::map<std::string, double> counter_integral;
  // Bytes the "io" spans read, and the reads they hold.
  uint64_t read_bytes = 0;
  uint64_t reads = 0;
  // otherData.dropped_events.
  uint64_t dropped_events = 0;
};

// Reads the trace at `path` and adds a gtest failure for each way it breaks
// the format: not one JSON object with a "traceEvents" array; an event
// without its phase, pid, tid, name or timestamp; a complete event without
// a duration >= 0; begin ("B") and end ("E") events that do not match per
// thread; timestamps that go back on a thread; complete events on a thread
// that overlap without nesting; a process or thread with events but no
// name; a counter whose values are not numbers.
TraceSummary CheckTrace(const std::string& path);

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TESTING_TRACE_CHECK_H_
