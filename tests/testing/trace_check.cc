#include "tests/testing/trace_check.h"

#include <fstream>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sluice::testing {
namespace {

using Json = nlohmann::json;
using Track = std::pair<int64_t, int64_t>;  // pid, tid

// Microseconds are written with three decimals: equal within rounding.
constexpr double kSlackMicros = 0.002;

}  // namespace

TraceSummary CheckTrace(const std::string& path) {
  TraceSummary summary;
  std::ifstream file(path);
  if (!file) {
    ADD_FAILURE() << "cannot open the trace " << path;
    return summary;
  }
  std::stringstream text;
  text << file.rdbuf();
  const Json trace =
      Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (trace.is_discarded() || !trace.is_object() ||
      !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    ADD_FAILURE() << path << " is not a JSON object with a traceEvents array";
    return summary;
  }
  if (trace.contains("otherData") &&
      trace["otherData"].contains("dropped_events")) {
    summary.dropped_events =
        trace["otherData"]["dropped_events"].get<uint64_t>();
  }
  std::set<int64_t> named_processes;
  std::set<Track> named_threads, used_threads;
  std::set<int64_t> used_processes;
  std::map<Track, double> last_ts;
  // Per thread: the ends of the enclosing complete events, innermost last;
  // the open begin events' names.
  std::map<Track, std::vector<double>> enclosing;
  std::map<Track, std::vector<std::string>> open;
  // Each counter's last (time, value).
  std::map<std::string, std::pair<double, double>> last_sample;
  int failures = 0;
  const auto fail = [&](const Json& event, const std::string& why) {
    if (++failures <= 10) ADD_FAILURE() << why << ": " << event.dump();
  };
  for (const Json& event : trace["traceEvents"]) {
    if (!event.is_object() || !event.contains("ph") ||
        !event["ph"].is_string() || !event.contains("pid") ||
        !event.contains("name") || !event["name"].is_string()) {
      fail(event, "an event without ph, pid or name");
      continue;
    }
    const std::string ph = event["ph"];
    const int64_t pid = event["pid"].get<int64_t>();
    if (ph == "M") {
      const std::string what = event["name"];
      if (what == "process_name") named_processes.insert(pid);
      if (what == "thread_name") {
        const Track track{pid, event.at("tid").get<int64_t>()};
        named_threads.insert(track);
        summary.thread_names[track] = event["args"].value("name", "");
      }
      continue;
    }
    if (!event.contains("tid") || !event.contains("ts") ||
        !event["ts"].is_number()) {
      fail(event, "an event without tid or ts");
      continue;
    }
    ++summary.events;
    const Track track{pid, event["tid"].get<int64_t>()};
    const double ts = event["ts"].get<double>();
    used_processes.insert(pid);
    if (auto last = last_ts.find(track);
        last != last_ts.end() && ts < last->second) {
      fail(event, "a timestamp before the previous one on its thread");
    }
    last_ts[track] = ts;
    if (ph == "C") {
      ++summary.counters;
      if (!event.contains("args") || !event["args"].is_object()) {
        fail(event, "a counter without args");
        continue;
      }
      for (const auto& [key, value] : event["args"].items()) {
        if (!value.is_number()) fail(event, "a counter value not a number");
        const std::string name = event["name"].get<std::string>() + " " + key;
        summary.counter_max[name] =
            std::max(summary.counter_max[name], value.get<double>());
        if (auto last = last_sample.find(name); last != last_sample.end()) {
          summary.counter_integral[name] +=
              (ts - last->second.first) / 1e6 * last->second.second;
        }
        last_sample[name] = {ts, value.get<double>()};
      }
      continue;
    }
    used_threads.insert(track);
    std::vector<double>& ends = enclosing[track];
    while (!ends.empty() && ends.back() <= ts + kSlackMicros) ends.pop_back();
    if (ph == "X") {
      if (!event.contains("dur") || !event["dur"].is_number() ||
          event["dur"].get<double>() < 0) {
        fail(event, "a complete event without a duration >= 0");
        continue;
      }
      const double end = ts + event["dur"].get<double>();
      if (!ends.empty() && end > ends.back() + kSlackMicros) {
        fail(event, "a complete event that overlaps another without nesting");
      }
      ends.push_back(end);
      const std::string category = event.value("cat", "");
      ++summary.spans[category];
      if (category == "busy") {
        const double seconds = event["dur"].get<double>() / 1e6;
        summary.busy_seconds[event["name"]] += seconds;
        summary.thread_busy_seconds[track] += seconds;
      }
      if (category == "io") {
        summary.read_bytes += event["args"]["bytes"].get<uint64_t>();
        summary.reads += event["args"]["reads"].get<uint64_t>();
      }
    } else if (ph == "B") {
      open[track].push_back(event["name"]);
    } else if (ph == "E") {
      if (open[track].empty()) {
        fail(event, "an end event without its begin");
      } else {
        open[track].pop_back();
      }
    } else if (ph != "i" && ph != "I") {
      fail(event, "an unexpected phase");
    }
  }
  for (const auto& [track, names] : open) {
    if (!names.empty()) {
      ADD_FAILURE() << names.size() << " begin event(s) without an end on pid "
                    << track.first << " tid " << track.second;
    }
  }
  for (const int64_t pid : used_processes) {
    EXPECT_TRUE(named_processes.contains(pid))
        << "process " << pid << " has no name";
  }
  for (const Track& track : used_threads) {
    EXPECT_TRUE(named_threads.contains(track))
        << "thread " << track.second << " of process " << track.first
        << " has no name";
  }
  return summary;
}

}  // namespace sluice::testing
