#include "engine/trace_recorder.h"

#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/thread_span.h"
#include "io/atomic_file.h"

namespace sluice {
namespace {

// Events per piece of a thread's buffer.
constexpr size_t kChunkEvents = 1024;

std::atomic<uint64_t> next_recorder_id{1};

// The calling thread's buffer for the recorder it recorded into last.
struct ThreadCache {
  uint64_t recorder_id = 0;
  void* buffer = nullptr;
};
thread_local ThreadCache thread_cache;

int64_t SecondsToNanos(double seconds) {
  if (seconds <= 0) return 0;
  const double nanos = seconds * 1e9;
  if (nanos >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(nanos);
}

// The end of a window of `seconds` (0: none) from `begin_ns`.
int64_t WindowEnd(int64_t begin_ns, double seconds) {
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  const int64_t length = SecondsToNanos(seconds);
  if (seconds <= 0 || length > kNever - begin_ns) return kNever;
  return begin_ns + length;
}

std::string ThisThreadName() {
  char name[64] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) return "";
  return name;
}

}  // namespace

// The events one thread recorded: pieces of kChunkEvents, filled by that
// thread only. `size` publishes what is written (release), so that the
// writer of the file reads whole events; `mu` guards `chunks` against that
// reader while the owner adds a piece.
struct TraceRecorder::ThreadBuffer {
  std::thread::id thread;
  std::string name;
  std::mutex mu;
  std::vector<std::unique_ptr<TraceEvent[]>> chunks;
  std::atomic<size_t> size{0};
  // Events this buffer may hold before it needs more of the bound (owner
  // only).
  size_t reserved = 0;
};

absl::Status TraceRecorder::Validate(const TraceConfig& config) {
  const auto field_error = [](absl::string_view field, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("DataLoaderConfig: field 'trace.", field, "' ", what));
  };
  if (config.file().empty()) return field_error("file", "must be set");
  if (config.max_events() < 1) {
    return field_error("max_events", "must be at least 1");
  }
  if (!std::isfinite(config.start_seconds()) || config.start_seconds() < 0) {
    return field_error("start_seconds", "must be >= 0");
  }
  if (!std::isfinite(config.duration_seconds()) ||
      config.duration_seconds() < 0) {
    return field_error("duration_seconds", "must be >= 0 (0: no limit)");
  }
  if (!std::isfinite(config.counter_interval_seconds()) ||
      config.counter_interval_seconds() <= 0) {
    return field_error("counter_interval_seconds", "must be > 0");
  }
  if (absl::Status writable = CheckFileWritable(config.file());
      !writable.ok()) {
    return field_error("file", writable.message());
  }
  return absl::OkStatus();
}

TraceRecorder::TraceRecorder(const TraceConfig& config)
    : config_(config),
      id_(next_recorder_id.fetch_add(1)),
      window_begin_ns_(SecondsToNanos(config.start_seconds())),
      window_end_ns_(WindowEnd(window_begin_ns_, config.duration_seconds())),
      budget_(config.max_events()) {}

TraceRecorder::~TraceRecorder() { Finish(); }

uint32_t TraceRecorder::AddStage(std::string name, std::string type) {
  tracks_.stages.push_back({std::move(name), std::move(type)});
  return static_cast<uint32_t>(tracks_.stages.size() - 1);
}

uint32_t TraceRecorder::AddChannel(uint32_t stage, std::string name,
                                   uint64_t capacity) {
  tracks_.channels.push_back({stage, std::move(name), capacity});
  return static_cast<uint32_t>(tracks_.channels.size() - 1);
}

uint32_t TraceRecorder::AddOutput(std::string alias) {
  tracks_.outputs.push_back(std::move(alias));
  return static_cast<uint32_t>(tracks_.outputs.size() - 1);
}

void TraceRecorder::Begin(Clock::time_point start) {
  origin_ = start;
  ThreadSpan::AddRecorder();
  recording_.store(true, std::memory_order_release);
}

void TraceRecorder::Finish() {
  if (recording_.exchange(false, std::memory_order_acq_rel)) {
    ThreadSpan::RemoveRecorder();
  }
}

std::chrono::nanoseconds TraceRecorder::counter_interval() const {
  return std::chrono::nanoseconds(
      std::max<int64_t>(SecondsToNanos(config_.counter_interval_seconds()), 1));
}

TraceRecorder::ThreadBuffer& TraceRecorder::ThisThreadBuffer() {
  if (thread_cache.recorder_id == id_) {
    return *static_cast<ThreadBuffer*>(thread_cache.buffer);
  }
  std::lock_guard lock(buffers_mu_);
  const std::thread::id self = std::this_thread::get_id();
  ThreadBuffer* found = nullptr;
  for (const auto& buffer : buffers_) {
    if (buffer->thread == self) found = buffer.get();
  }
  if (found == nullptr) {
    auto buffer = std::make_unique<ThreadBuffer>();
    buffer->thread = self;
    buffer->name = ThisThreadName();
    found = buffer.get();
    buffers_.push_back(std::move(buffer));
  }
  thread_cache = {id_, found};
  return *found;
}

bool TraceRecorder::Grow(ThreadBuffer& buffer) {
  uint64_t budget = budget_.load(std::memory_order_relaxed);
  uint64_t taken;
  do {
    if (budget == 0) return false;
    taken = std::min<uint64_t>(budget, kChunkEvents);
  } while (!budget_.compare_exchange_weak(budget, budget - taken,
                                          std::memory_order_relaxed));
  if (buffer.reserved % kChunkEvents == 0) {
    std::lock_guard lock(buffer.mu);
    buffer.chunks.push_back(std::make_unique<TraceEvent[]>(kChunkEvents));
  }
  // The last piece may be granted in parts; it never outgrows its chunk.
  buffer.reserved += taken;
  return true;
}

void TraceRecorder::Record(TraceEvent event) {
  if (!recording_.load(std::memory_order_acquire)) return;
  event.begin_ns = std::max(event.begin_ns, window_begin_ns_);
  event.end_ns = std::min(event.end_ns, window_end_ns_);
  if (event.end_ns < event.begin_ns) return;  // outside the window
  ThreadBuffer& buffer = ThisThreadBuffer();
  const size_t size = buffer.size.load(std::memory_order_relaxed);
  if (size == buffer.reserved && !Grow(buffer)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  buffer.chunks[size / kChunkEvents][size % kChunkEvents] = event;
  buffer.size.store(size + 1, std::memory_order_release);
}

void TraceRecorder::RecordBusyCount(uint32_t stage, Clock::time_point at,
                                    uint64_t busy) {
  RecordCounter(TraceEvent::Kind::kBusyCount, stage, at, busy);
}

void TraceRecorder::RecordThreadBusy(uint32_t stage, Clock::time_point begin,
                                     Clock::time_point end) {
  Record({.begin_ns = Since(begin),
          .end_ns = Since(end),
          .track = stage,
          .kind = TraceEvent::Kind::kThreadBusy});
}

void TraceRecorder::RecordFill(uint32_t channel, Clock::time_point at,
                               uint64_t items) {
  RecordCounter(TraceEvent::Kind::kFill, channel, at, items);
}

void TraceRecorder::RecordCounter(TraceEvent::Kind kind, uint32_t track,
                                  Clock::time_point at, uint64_t value) {
  const int64_t ns = Since(at);
  if (ns < window_begin_ns_ || ns >= window_end_ns_) return;
  Record({.begin_ns = ns,
          .end_ns = ns,
          .value = value,
          .track = track,
          .kind = kind});
}

void TraceRecorder::RecordBatch(uint32_t output, uint64_t number,
                                Clock::time_point begin,
                                Clock::time_point end) {
  Record({.begin_ns = Since(begin),
          .end_ns = Since(end),
          .value = number,
          .track = output,
          .kind = TraceEvent::Kind::kBatch});
}

void TraceRecorder::RecordCheckpoint(uint64_t batches, Clock::time_point begin,
                                     Clock::time_point end) {
  Record({.begin_ns = Since(begin),
          .end_ns = Since(end),
          .value = batches,
          .kind = TraceEvent::Kind::kCheckpoint});
}

void TraceRecorder::OnReads(Clock::time_point begin, Clock::time_point end,
                            size_t reads, uint64_t bytes,
                            size_t from_page_cache) {
  Record({.begin_ns = Since(begin),
          .end_ns = Since(end),
          .value = bytes,
          .count = static_cast<uint32_t>(reads),
          .cached = static_cast<uint32_t>(from_page_cache),
          .kind = TraceEvent::Kind::kReads});
}

absl::Status TraceRecorder::WriteFile() {
  Finish();
  TraceContents contents = tracks_;
  {
    std::lock_guard lock(buffers_mu_);
    for (const auto& buffer : buffers_) {
      TraceContents::Thread thread{.name = buffer->name};
      std::lock_guard chunks_lock(buffer->mu);
      const size_t size = buffer->size.load(std::memory_order_acquire);
      thread.events.reserve(size);
      for (size_t i = 0; i < size; ++i) {
        thread.events.push_back(
            buffer->chunks[i / kChunkEvents][i % kChunkEvents]);
      }
      contents.threads.push_back(std::move(thread));
    }
  }
  contents.dropped_events = dropped();
  contents.max_events = config_.max_events();
  return WriteTraceJson(config_.file(), std::move(contents));
}

}  // namespace sluice
