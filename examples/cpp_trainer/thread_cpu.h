// CPU time of this process's threads, by thread name, for benchmarks that
// share a process between a loader and a trainer.
//
//   const double before = ThreadCpuSeconds("sluice-w");  // sluice's workers
//   ...
//   const double loader_cpu = ThreadCpuSeconds("sluice-w") - before;
#ifndef CPP_TRAINER_THREAD_CPU_H_
#define CPP_TRAINER_THREAD_CPU_H_

#include <string_view>

namespace trainer {

// Seconds on CPU of the live threads of this process whose name starts
// with `prefix` (from /proc/self/task/*/schedstat, nanosecond resolution).
// Threads that have exited are not counted: take both readings while the
// threads run.
double ThreadCpuSeconds(std::string_view prefix);

// Seconds on CPU of the calling thread.
double CurrentThreadCpuSeconds();

}  // namespace trainer

#endif  // CPP_TRAINER_THREAD_CPU_H_
