#include "engine/trace_json.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "io/atomic_file.h"

namespace sluice {
namespace {

// Process ids: the callers' threads, the file reads, the worker threads,
// then one per stage.
constexpr int kCallersPid = 1;
constexpr int kReadsPid = 2;
constexpr int kWorkersPid = 3;
constexpr int kFirstStagePid = 100;
// Thread ids, unique across the file (viewers key threads by tid).
constexpr int64_t kFirstCallerTid = 1000;
constexpr int64_t kFirstReadLaneTid = 200000;
constexpr int64_t kFirstWorkerTid = 500000;
constexpr int64_t kFirstStageTid = 1000000;

// Pieces of JSON handed to the file at a time.
constexpr size_t kFlushBytes = size_t{1} << 20;

// `text` as a JSON string literal.
std::string Quoted(absl::string_view text) {
  std::string quoted = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          quoted += absl::StrFormat("\\u%04x", c);
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

// Nanoseconds as microseconds with three decimals (the format's unit).
void AppendMicros(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  absl::StrAppend(&out, ns / 1000, ".", absl::Dec(ns % 1000, absl::kZeroPad3));
}

// An event with the thread that recorded it and, for reads, its lane.
struct Placed {
  TraceEvent event;
  uint32_t thread;
  uint32_t lane;
};

// Gives each read a lane (the lowest one free at its start), so that the
// reads of one lane never overlap.
void AssignReadLanes(std::vector<Placed>& events, uint32_t* lanes) {
  std::vector<Placed*> reads;
  for (Placed& placed : events) {
    if (placed.event.kind == TraceEvent::Kind::kReads) reads.push_back(&placed);
  }
  std::sort(reads.begin(), reads.end(), [](const Placed* a, const Placed* b) {
    return a->event.begin_ns < b->event.begin_ns;
  });
  // (end, lane) of the lanes in use, earliest end first; free lanes.
  using Busy = std::pair<int64_t, uint32_t>;
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> idle;
  *lanes = 0;
  for (Placed* read : reads) {
    while (!busy.empty() && busy.top().first <= read->event.begin_ns) {
      idle.push(busy.top().second);
      busy.pop();
    }
    if (idle.empty()) idle.push((*lanes)++);
    read->lane = idle.top();
    idle.pop();
    busy.push({read->event.end_ns, read->lane});
  }
}

class JsonOut {
 public:
  explicit JsonOut(AtomicFileWriter& file) : file_(file) {}
  std::string& text() { return text_; }
  // Starts a new element of the event array.
  void NextEvent() {
    text_ += first_ ? "\n" : ",\n";
    first_ = false;
  }
  absl::Status MaybeFlush() {
    if (text_.size() < kFlushBytes) return absl::OkStatus();
    return Flush();
  }
  absl::Status Flush() {
    absl::Status appended = file_.Append(text_);
    text_.clear();
    return appended;
  }

 private:
  AtomicFileWriter& file_;
  std::string text_;
  bool first_ = true;
};

// Metadata event `what` ("process_name", "thread_sort_index", ...) with
// argument `key`: `value` (JSON). A process's own (tid < 0) has no tid.
void AppendMetadata(JsonOut& out, absl::string_view what, int pid, int64_t tid,
                    absl::string_view key, absl::string_view value) {
  out.NextEvent();
  absl::StrAppend(&out.text(), "{\"ph\":\"M\",\"name\":\"", what,
                  "\",\"pid\":", pid);
  if (tid >= 0) absl::StrAppend(&out.text(), ",\"tid\":", tid);
  absl::StrAppend(&out.text(), ",\"args\":{\"", key, "\":", value, "}}");
}

void AppendProcess(JsonOut& out, int pid, absl::string_view name,
                   int64_t sort_index) {
  AppendMetadata(out, "process_name", pid, -1, "name", Quoted(name));
  AppendMetadata(out, "process_sort_index", pid, -1, "sort_index",
                 absl::StrCat(sort_index));
}

void AppendThread(JsonOut& out, int pid, int64_t tid, absl::string_view name,
                  int64_t sort_index) {
  AppendMetadata(out, "thread_name", pid, tid, "name", Quoted(name));
  AppendMetadata(out, "thread_sort_index", pid, tid, "sort_index",
                 absl::StrCat(sort_index));
}

// The head of a complete event: phase, name, category, track and times.
void AppendSpan(JsonOut& out, absl::string_view quoted_name,
                absl::string_view category, int pid, int64_t tid,
                const TraceEvent& event) {
  out.NextEvent();
  std::string& text = out.text();
  absl::StrAppend(&text, "{\"ph\":\"X\",\"name\":", quoted_name, ",\"cat\":\"",
                  category, "\",\"pid\":", pid, ",\"tid\":", tid, ",\"ts\":");
  AppendMicros(text, event.begin_ns);
  text += ",\"dur\":";
  AppendMicros(text, event.end_ns - event.begin_ns);
}

// A counter's value in the process of stage `stage`.
void AppendCounter(JsonOut& out, absl::string_view quoted_name,
                   absl::string_view category, uint32_t stage,
                   absl::string_view key, const TraceEvent& event) {
  out.NextEvent();
  std::string& text = out.text();
  absl::StrAppend(&text, "{\"ph\":\"C\",\"name\":", quoted_name, ",\"cat\":\"",
                  category,
                  "\",\"pid\":", kFirstStagePid + static_cast<int64_t>(stage),
                  ",\"tid\":", kFirstStageTid + stage, ",\"ts\":");
  AppendMicros(text, event.begin_ns);
  absl::StrAppend(&text, ",\"args\":{\"", key, "\":", event.value, "}}");
}

}  // namespace

absl::Status WriteTraceJson(const std::string& path, TraceContents contents) {
  std::vector<Placed> events;
  for (uint32_t t = 0; t < contents.threads.size(); ++t) {
    for (const TraceEvent& event : contents.threads[t].events) {
      events.push_back({event, t, 0});
    }
    contents.threads[t].events = {};
  }
  uint32_t read_lanes = 0;
  AssignReadLanes(events, &read_lanes);
  // Time order; a span before the spans it encloses.
  std::stable_sort(events.begin(), events.end(),
                   [](const Placed& a, const Placed& b) {
                     if (a.event.begin_ns != b.event.begin_ns) {
                       return a.event.begin_ns < b.event.begin_ns;
                     }
                     return a.event.end_ns > b.event.end_ns;
                   });
  // Which tracks have events: only those get names.
  std::vector<bool> caller(contents.threads.size(), false);
  std::vector<bool> worker(contents.threads.size(), false);
  bool any_worker = false;
  for (const Placed& placed : events) {
    const TraceEvent::Kind kind = placed.event.kind;
    if (kind == TraceEvent::Kind::kBatch ||
        kind == TraceEvent::Kind::kCheckpoint) {
      caller[placed.thread] = true;
    }
    if (kind == TraceEvent::Kind::kThreadBusy) {
      worker[placed.thread] = true;
      any_worker = true;
    }
  }
  const auto thread_name = [&](uint32_t t) {
    const std::string& name = contents.threads[t].name;
    return name.empty() ? absl::StrCat("thread ", t) : name;
  };

  absl::StatusOr<AtomicFileWriter> file = AtomicFileWriter::CreateForPath(path);
  if (!file.ok()) return file.status();
  JsonOut out(*file);
  out.text() = "{\"displayTimeUnit\":\"ms\",\"otherData\":{";
  absl::StrAppend(
      &out.text(), "\"producer\":\"sluice\",\"events\":", events.size(),
      ",\"dropped_events\":", contents.dropped_events,
      ",\"max_events\":", contents.max_events, "},\n\"traceEvents\":[");

  AppendProcess(out, kCallersPid, "sluice callers (batches, checkpoints)", 0);
  for (uint32_t t = 0; t < contents.threads.size(); ++t) {
    if (caller[t]) {
      AppendThread(out, kCallersPid, kFirstCallerTid + t, thread_name(t), t);
    }
  }
  if (any_worker) AppendProcess(out, kWorkersPid, "worker threads", 1);
  for (uint32_t t = 0; t < contents.threads.size(); ++t) {
    if (worker[t]) {
      AppendThread(out, kWorkersPid, kFirstWorkerTid + t, thread_name(t), t);
    }
  }
  if (read_lanes > 0) AppendProcess(out, kReadsPid, "file reads", 2);
  for (uint32_t lane = 0; lane < read_lanes; ++lane) {
    AppendThread(out, kReadsPid, kFirstReadLaneTid + lane,
                 absl::StrCat("reads ", lane + 1), lane);
  }
  std::vector<std::string> stage_names;
  std::vector<std::string> busy_count_names;
  for (uint32_t s = 0; s < contents.stages.size(); ++s) {
    const TraceContents::Stage& stage = contents.stages[s];
    stage_names.push_back(Quoted(stage.name));
    // Shown as "NAME busy coroutines" (the name and the argument's key).
    busy_count_names.push_back(Quoted(absl::StrCat(stage.name, " busy")));
    AppendProcess(out, kFirstStagePid + static_cast<int>(s),
                  absl::StrCat("stage ", stage.name, " (", stage.type, ")"),
                  10 + s);
  }
  std::vector<std::string> channel_names;
  for (const TraceContents::Channel& channel : contents.channels) {
    channel_names.push_back(Quoted(
        absl::StrCat(channel.name, " fill (capacity ", channel.capacity, ")")));
  }
  std::vector<std::string> batch_names;
  for (const std::string& alias : contents.outputs) {
    batch_names.push_back(
        Quoted(alias.empty() ? "batch" : absl::StrCat("batch ", alias)));
  }

  for (const Placed& placed : events) {
    const TraceEvent& event = placed.event;
    std::string& text = out.text();
    switch (event.kind) {
      case TraceEvent::Kind::kThreadBusy:
        if (event.track >= stage_names.size()) continue;
        AppendSpan(out, stage_names[event.track], "busy", kWorkersPid,
                   kFirstWorkerTid + placed.thread, event);
        text += "}";
        break;
      case TraceEvent::Kind::kBusyCount:
        if (event.track >= busy_count_names.size()) continue;
        AppendCounter(out, busy_count_names[event.track], "busy", event.track,
                      "coroutines", event);
        break;
      case TraceEvent::Kind::kFill:
        if (event.track >= channel_names.size()) continue;
        AppendCounter(out, channel_names[event.track], "fill",
                      contents.channels[event.track].stage, "items", event);
        break;
      case TraceEvent::Kind::kBatch:
        if (event.track >= batch_names.size()) continue;
        AppendSpan(out, batch_names[event.track], "output", kCallersPid,
                   kFirstCallerTid + placed.thread, event);
        absl::StrAppend(&text, ",\"args\":{\"batch\":", event.value, "}}");
        break;
      case TraceEvent::Kind::kCheckpoint:
        AppendSpan(out, "\"checkpoint\"", "checkpoint", kCallersPid,
                   kFirstCallerTid + placed.thread, event);
        absl::StrAppend(&text, ",\"args\":{\"batches\":", event.value, "}}");
        break;
      case TraceEvent::Kind::kReads:
        AppendSpan(out, "\"read\"", "io", kReadsPid,
                   kFirstReadLaneTid + placed.lane, event);
        absl::StrAppend(&text, ",\"args\":{\"reads\":", event.count,
                        ",\"bytes\":", event.value,
                        ",\"from_page_cache\":", event.cached, "}}");
        break;
    }
    if (absl::Status flushed = out.MaybeFlush(); !flushed.ok()) return flushed;
  }
  out.text() += "\n]}\n";
  if (absl::Status flushed = out.Flush(); !flushed.ok()) return flushed;
  return file->Commit();
}

}  // namespace sluice
