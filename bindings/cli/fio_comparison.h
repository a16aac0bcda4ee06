// fio beside sluice, like for like: `sluice bench io --compare-fio` runs
// fio's io_uring engine and sluice's io_uring reader (reader_job.h) on the
// same file with the same block size, queue depth, cache state, duration
// and CPU, and the same file handling:
// - both read whole blocks only (fio leaves out a last partial block);
// - both open the file with POSIX_FADV_SEQUENTIAL (fio's fadvise_hint);
// - both read into one page-aligned region of buffers (fio --iomem=mmap:
//   fio's default region is malloc's, which starts just past a page
//   boundary, and copies out of the page cache to such an address ran
//   three times slower on an AMD EPYC guest: 1.6-1.8 against 4.4-5.5 GB/s
//   at 1 MiB depth 32);
// - cold: each reads the file `passes` times (at most its first GiB),
//   opening it and dropping its pages at the start of every pass inside its
//   clock (fio: invalidate=1 with loops; sluice: the same calls); the pages
//   are also dropped before each run, outside both clocks;
// - warm: the file is read once beforehand, and each reads pass after pass
//   for `seconds` from the page cache;
// - direct: O_DIRECT (fio --direct=1) for `seconds`, pages dropped before;
// - registered: fio --fixedbufs --registerfiles against sluice's
//   registered buffers and file;
// - sluice's default path: sluice copies what the page cache holds at once
//   (preadv2 RWF_NOWAIT) instead of sending every read to the ring; fio is
//   unchanged;
// - both pinned to the same CPU (fio --cpus_allowed, sluice's thread
//   affinity), so neither gains from a second core or loses to migrations.
#ifndef SLUICE_BINDINGS_CLI_FIO_COMPARISON_H_
#define SLUICE_BINDINGS_CLI_FIO_COMPARISON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bindings/cli/reader_job.h"

namespace sluice::cli {

// The state of the page cache a case reads in.
enum class FioCache { kCold, kWarm, kDirect };

// "cold", "warm" or "direct".
const char* FioCacheName(FioCache cache);

// One measurement both tools make.
struct FioJob {
  std::string path;
  uint64_t block_bytes = 1 << 20;
  unsigned queue_depth = 32;
  FioCache cache = FioCache::kWarm;
  // fio --fixedbufs --registerfiles; sluice's registered buffers and file.
  bool registered = false;
  // sluice reads through its default path (cached reads copied inline).
  bool sluice_default_path = false;
  int seconds = 2;  // warm and direct runs
  int passes = 1;   // cold runs
  // Cold runs read the first `region_bytes` of the file (fio --size); 0:
  // all of it.
  uint64_t region_bytes = 0;
  // Both pinned to this CPU; -1: not pinned.
  int cpu = -1;
};

// Cold passes over a file of `file_bytes` that read at least 256 MiB in all
// (a pass over a small file alone is too short to time), 1 to 200.
int ColdPasses(uint64_t file_bytes);

// FioJob::region_bytes of a cold pass over a file of `file_bytes`: its
// first GiB, or 0 (all of it) when it is no larger.
uint64_t ColdRegionBytes(uint64_t file_bytes);

// fio's command line for `job` (argv, "fio" first): one job reading the file
// sequentially through io_uring, JSON output.
std::vector<std::string> FioArguments(const FioJob& job);

// The read bandwidth in GB/s from fio's JSON output (jobs[0].read.bw_bytes).
absl::StatusOr<double> ParseFioReadBandwidth(std::string_view json);

// Whether a `fio` program is on PATH.
bool FioInstalled();

// Runs fio for `job`, after preparing the page cache (see above); GB/s, or
// an error with fio's last words.
absl::StatusOr<double> RunFio(const FioJob& job);

// sluice's reader on the same job, with the same preparation; GB/s.
absl::StatusOr<double> RunSluice(const FioJob& job);
// The same, with the bytes read and the time taken.
absl::StatusOr<ReaderResult> RunSluiceJob(const FioJob& job);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_FIO_COMPARISON_H_
