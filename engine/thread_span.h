// ThreadSpan: which stage's coroutine works on the calling thread, for the
// worker-thread tracks of a trace (engine/trace_recorder.h).
//
// Each thread keeps one open span in a thread-local: the stage whose
// coroutine works on it and since when. The load meter opens it when a
// coroutine of its stage starts or resumes working and closes it when the
// coroutine waits or finishes (engine/load_meter.h); a yield closes it
// before the coroutine gives its thread away and opens it again on the
// thread that resumes the coroutine (engine/yield.h):
//
//   const ThreadSpan::Held held = ThreadSpan::Suspend();
//   co_await asio::defer(...);   // may resume on another thread
//   ThreadSpan::Resume(held);
//
// Promises:
// - A span is recorded when it closes, whole, on the thread it ran on, as
//   one complete event: the spans of a thread never overlap, and a
//   coroutine that moves between threads leaves a span on each.
// - No lock: the open span is the thread's own.
// - With no trace recording in the process, Enabled() is false and the
//   yield does nothing more than test it.
// - A thread belongs to one pipeline's executor while it runs its
//   coroutines, so the recorder of an open span is alive while the thread
//   runs them; a span opened for one recorder is never recorded into
//   another.
#ifndef SLUICE_ENGINE_THREAD_SPAN_H_
#define SLUICE_ENGINE_THREAD_SPAN_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace sluice {

class TraceRecorder;  // engine/trace_recorder.h

class ThreadSpan {
 public:
  using Clock = std::chrono::steady_clock;

  // What a coroutine that gives its thread away takes along.
  struct Held {
    TraceRecorder* trace = nullptr;
    uint32_t stage = 0;
  };

  // A coroutine of `stage` (a stage track of `trace`) works on the calling
  // thread from `now`: records the span left open on the thread, if any,
  // and opens this one.
  static void Open(TraceRecorder* trace, uint32_t stage, Clock::time_point now);
  // The coroutine working on the calling thread stops at `now` (waits or
  // finishes): records the open span of `trace`.
  static void Close(TraceRecorder* trace, Clock::time_point now);

  // Records the open span now and returns what it was (nothing open: an
  // empty Held).
  static Held Suspend();
  // Opens `held` again on the calling thread, now.
  static void Resume(const Held& held);

  // True while some trace in the process records (one relaxed load).
  static bool Enabled() {
    return recorders_.load(std::memory_order_relaxed) > 0;
  }
  // A recorder starts or stops recording (TraceRecorder::Begin/Finish).
  static void AddRecorder() { recorders_.fetch_add(1); }
  static void RemoveRecorder() { recorders_.fetch_sub(1); }

 private:
  static std::atomic<int> recorders_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_THREAD_SPAN_H_
