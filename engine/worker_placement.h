// Where an executor's worker threads run: each on a CPU of its own, or
// wherever the kernel puts them.
//
// Why pin at all: beside another busy thread (a trainer, a neighbour) no
// CPU is idle, and the kernel places a worker that another worker wakes on
// the waker's CPU. The two then take turns on one CPU while the other
// thread keeps a CPU to itself: on the 2-core VM, beside a memory-bound
// co-runner, the floating pipeline got 0.9-1.0 CPUs and 67-86 % of its
// no-engine bound; pinned, 90-105 % (docs/performance.md).
// Pinning is only automatic when the loader asks for every CPU the process
// may use (then each CPU gets one worker either way, and pinning only stops
// the stacking) and does not run at a lowered priority (niceness above 0:
// other work would keep a pinned worker off its CPU, where a floating one
// would be moved).
#ifndef SLUICE_ENGINE_WORKER_PLACEMENT_H_
#define SLUICE_ENGINE_WORKER_PLACEMENT_H_

#include <span>
#include <vector>

namespace sluice {

enum class WorkerPlacement {
  // Pinned when the worker count equals the CPUs the process may use and
  // the process is not niced, floating otherwise.
  kAuto,
  // Worker i on the i-th allowed CPU (round robin when there are more
  // workers than CPUs).
  kPinned,
  // Never pinned: the kernel places the threads.
  kFloating,
};

// The CPUs this process may run on (its affinity mask), ascending; never
// empty (CPU 0 if the mask cannot be read).
std::vector<int> AllowedCpus();

// The niceness of this process (getpriority; 0 if it cannot be read).
int ProcessNiceness();

// The CPU for each of `threads` workers under `placement`, given the
// allowed CPUs and the process's niceness: `threads` entries, or none when
// the threads float.
std::vector<int> PinnedCpus(WorkerPlacement placement, unsigned threads,
                            std::span<const int> allowed, int niceness);

// Restricts the calling thread to `cpu`; false (and unchanged) if the OS
// refuses, as some sandboxes do.
bool PinCurrentThread(int cpu);

}  // namespace sluice

#endif  // SLUICE_ENGINE_WORKER_PLACEMENT_H_
