// The Trace Event Format writer behind TraceRecorder (trace_recorder.h):
// the JSON object format that Perfetto UI (ui.perfetto.dev) and
// chrome://tracing open.
//
//   TraceContents contents = ...;   // tracks and the events of each thread
//   SLUICE_RETURN_IF_ERROR(WriteTraceJson("run.json", std::move(contents)));
//
// Layout of the file: {"traceEvents": [...], "displayTimeUnit": "ms",
// "otherData": {...}}. Names come first as metadata events ("M"); then
// every event in time order: spans as complete events ("X", with "dur"),
// busy counts and channel fills as counters ("C"). Timestamps are
// microseconds since the pipeline started. The threads that took batches
// and checkpoints are process 1, file reads process 2, the worker threads
// (a track per thread, spans named after stages) process 3; each stage is
// a process (pid 100 + its index) holding its counters. Thread ids are
// unique across the file.
#ifndef SLUICE_ENGINE_TRACE_JSON_H_
#define SLUICE_ENGINE_TRACE_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace sluice {

// One recorded event; times in nanoseconds since the pipeline started.
struct TraceEvent {
  // What the event is; decides its track and its arguments.
  enum class Kind : uint8_t {
    kThreadBusy,  // a stage's coroutine worked on the recording thread;
                  // track: stage
    kBusyCount,   // a stage's busy coroutines; track: stage, value: count
    kFill,        // a channel's fill; track: channel, value: items
    kBatch,       // a batch handed out; track: output, value: its number
    kCheckpoint,  // a checkpoint taken; value: batches before it
    kReads,       // file reads; value: bytes, count: reads, cached: of
                  // those, served from the page cache at once
  };
  int64_t begin_ns = 0;
  int64_t end_ns = 0;  // begin_ns for a counter
  uint64_t value = 0;
  uint32_t track = 0;
  uint32_t count = 0;
  uint32_t cached = 0;
  Kind kind = Kind::kThreadBusy;
};

// Everything a trace file holds.
struct TraceContents {
  struct Stage {
    std::string name;
    std::string type;
  };
  struct Channel {
    uint32_t stage;  // index into stages
    std::string name;
    uint64_t capacity;
  };
  // A thread that recorded events (its events in any order).
  struct Thread {
    std::string name;
    std::vector<TraceEvent> events;
  };
  std::vector<Stage> stages;
  std::vector<Channel> channels;
  std::vector<std::string> outputs;  // aliases; "" is the first output
  std::vector<Thread> threads;
  // Reported in otherData.
  uint64_t dropped_events = 0;
  uint64_t max_events = 0;
};

// Writes `contents` to `path` atomically (io/atomic_file.h).
absl::Status WriteTraceJson(const std::string& path, TraceContents contents);

}  // namespace sluice

#endif  // SLUICE_ENGINE_TRACE_JSON_H_
