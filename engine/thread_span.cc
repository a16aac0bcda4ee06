#include "engine/thread_span.h"

#include "engine/trace_recorder.h"

namespace sluice {
namespace {

// The calling thread's open span (trace == nullptr: none).
struct OpenSpan {
  TraceRecorder* trace = nullptr;
  uint32_t stage = 0;
  ThreadSpan::Clock::time_point begin;
};
thread_local OpenSpan open_span;

}  // namespace

std::atomic<int> ThreadSpan::recorders_{0};

void ThreadSpan::Open(TraceRecorder* trace, uint32_t stage,
                      Clock::time_point now) {
  // Left open by a coroutine that suspended outside the meter (counted as
  // busy by the meter meanwhile): it ends where this one begins.
  if (open_span.trace == trace) {
    trace->RecordThreadBusy(open_span.stage, open_span.begin, now);
  }
  open_span = {trace, stage, now};
}

void ThreadSpan::Close(TraceRecorder* trace, Clock::time_point now) {
  if (open_span.trace == trace) {
    trace->RecordThreadBusy(open_span.stage, open_span.begin, now);
  }
  open_span.trace = nullptr;
}

ThreadSpan::Held ThreadSpan::Suspend() {
  const Held held{open_span.trace, open_span.stage};
  if (held.trace != nullptr) Close(held.trace, Clock::now());
  return held;
}

void ThreadSpan::Resume(const Held& held) {
  if (held.trace != nullptr) Open(held.trace, held.stage, Clock::now());
}

}  // namespace sluice
