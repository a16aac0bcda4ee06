// TraceRecorder: records what a pipeline does over time and writes it as a
// trace in the Trace Event Format (JSON), which Perfetto UI
// (ui.perfetto.dev) and chrome://tracing open. Configured by
// DataLoaderConfig.trace (TraceConfig); the pipeline owns one when tracing
// is on, and none otherwise.
//
//   SLUICE_RETURN_IF_ERROR(TraceRecorder::Validate(config.trace()));
//   TraceRecorder trace(config.trace());
//   const uint32_t stage = trace.AddStage("decoder", "audio_decoder");
//   meter.TraceInto(&trace, stage);   // busy count, thread spans
//   trace.Begin(Clock::now());
//   ... the run ...
//   trace.Finish();
//   SLUICE_RETURN_IF_ERROR(trace.WriteFile());
//
// What a trace shows (one "process" per group in the viewers):
// - "worker threads": a track per executor worker thread, with a span
//   named after the stage whose coroutine worked on it, from the point it
//   started or resumed to the point it waited, yielded or finished
//   (engine/thread_span.h);
// - a process per stage with its count of busy coroutines as a counter,
//   changed at the load meter's own instrumentation points with the same
//   clock readings, so its integral over time is the stage's
//   busy_seconds; beside it, each output channel's fill as a counter,
//   sampled every counter_interval_seconds;
// - "file reads": each batch of reads from its submission to the
//   completion of its last read, with the reads, bytes and those served
//   from the page cache at once (lanes of overlapping reads);
// - the threads that pull batches and take checkpoints: each batch's
//   hand-off (the wait in GetNext and the item taken) and each checkpoint.
//
// Promises:
// - Recording is thread-safe and takes no lock on its common path: each
//   thread appends to a buffer of its own. A span is recorded when it
//   ends, whole, as a complete event: spans never lack an end.
// - Bounded: at most max_events events are kept (the rest are counted as
//   dropped), in memory until WriteFile; spans are cut to the window
//   [start_seconds, start_seconds + duration_seconds) after Begin().
// - WriteFile writes the file atomically (a reader sees the old file or
//   the whole new one), events in time order.
#ifndef SLUICE_ENGINE_TRACE_RECORDER_H_
#define SLUICE_ENGINE_TRACE_RECORDER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/trace_json.h"
#include "io/async_file_reader.h"
#include "proto/data_loader_config.pb.h"

namespace sluice {

class TraceRecorder final : public io::AsyncFileReader::ReadObserver {
 public:
  using Clock = std::chrono::steady_clock;

  // OK, or InvalidArgument naming the TraceConfig field ("trace.file",
  // ...) that is missing or out of range, or a file that cannot be
  // written (io/atomic_file.h CheckFileWritable).
  static absl::Status Validate(const TraceConfig& config);

  // `config` must have passed Validate.
  explicit TraceRecorder(const TraceConfig& config);
  ~TraceRecorder() override;
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  // Tracks, added before Begin(), from one thread. Each returns the index
  // that recording calls take.
  uint32_t AddStage(std::string name, std::string type);
  // A channel's fill, shown in its stage's process.
  uint32_t AddChannel(uint32_t stage, std::string name, uint64_t capacity);
  // An output that hands batches to callers ("" is the first).
  uint32_t AddOutput(std::string alias);

  // Time zero of the trace; recording starts (after start_seconds).
  // Once.
  void Begin(Clock::time_point start);
  // Recording stops; later calls record nothing. Idempotent; the
  // destructor calls it.
  void Finish();

  // Recording, from any thread.
  // The stage's busy coroutines changed to `busy` at `at`.
  void RecordBusyCount(uint32_t stage, Clock::time_point at, uint64_t busy);
  // On the calling thread's track: a coroutine of the stage worked on it
  // (engine/thread_span.h).
  void RecordThreadBusy(uint32_t stage, Clock::time_point begin,
                        Clock::time_point end);
  void RecordFill(uint32_t channel, Clock::time_point at, uint64_t items);
  // On the calling thread's track.
  void RecordBatch(uint32_t output, uint64_t number, Clock::time_point begin,
                   Clock::time_point end);
  void RecordCheckpoint(uint64_t batches, Clock::time_point begin,
                        Clock::time_point end);
  // io::AsyncFileReader::ReadObserver.
  void OnReads(Clock::time_point begin, Clock::time_point end, size_t reads,
               uint64_t bytes, size_t from_page_cache) override;

  // Seconds between two samples of the channels' fill.
  std::chrono::nanoseconds counter_interval() const;
  // Events not kept because max_events was reached.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

  // Finishes, and writes the trace to config.file (engine/trace_json.h).
  // A thread still recording at that moment may see its last event left
  // out, never a torn one.
  absl::Status WriteFile();

 private:
  struct ThreadBuffer;

  // The calling thread's buffer (registered on its first event).
  ThreadBuffer& ThisThreadBuffer();
  // Appends `event` (times since the origin) when inside the window and
  // under the bound.
  void Record(TraceEvent event);
  // A counter's value `value` at `at`, when inside the window.
  void RecordCounter(TraceEvent::Kind kind, uint32_t track,
                     Clock::time_point at, uint64_t value);
  // Takes room for more events of `buffer` from the bound; false when it
  // is used up.
  bool Grow(ThreadBuffer& buffer);
  int64_t Since(Clock::time_point at) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at - origin_)
        .count();
  }

  const TraceConfig config_;
  // Unique per recorder in the process: tells thread-local caches apart.
  const uint64_t id_;
  const int64_t window_begin_ns_;
  const int64_t window_end_ns_;
  Clock::time_point origin_;
  std::atomic<bool> recording_{false};
  // Events that may still be kept.
  std::atomic<uint64_t> budget_;
  std::atomic<uint64_t> dropped_{0};

  // Tracks (the events are kept in buffers_ until WriteFile).
  TraceContents tracks_;

  std::mutex buffers_mu_;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_TRACE_RECORDER_H_
