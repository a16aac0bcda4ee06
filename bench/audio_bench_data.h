// The audio benchmark's data set: `sluice gen audio` clips written once as
// Arrow files, read back whole, and the torch peer's copy of them.
#ifndef SLUICE_BENCH_AUDIO_BENCH_DATA_H_
#define SLUICE_BENCH_AUDIO_BENCH_DATA_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/audio_bench_common.h"

namespace sluice::audio_bench {

// Every clip of the data set, in row order, read through io/arrow.
struct Clips {
  std::vector<std::vector<std::byte>> files;  // the views point in here
  std::vector<std::span<const std::byte>> bytes;
  std::vector<int64_t> labels;
  int64_t file_bytes = 0;
  int64_t encoded_bytes = 0;
  int64_t record_batches = 0;
};

// The Arrow files live in DIR/arrow (the pipeline reads that directory
// alone); the marker and the peer's files sit beside it.
std::string ArrowDir(const Options& options);

// Writes the data set into options.dir once (a marker file says it is
// complete) and returns its Arrow files, sorted.
std::vector<std::string> EnsureData(const Options& options);

// Reads the files at `paths` whole and every clip of them through
// io/arrow (which also warms the page cache).
Clips ReadClips(const std::vector<std::string>& paths);

// Writes the torch peer's input under DIR/peer: DATA (the clips' bytes
// concatenated), DATA.offsets.npy and DATA.labels.npy (int64); returns
// DATA.
std::string WritePeerData(const Clips& clips, const std::string& dir);

}  // namespace sluice::audio_bench

#endif  // SLUICE_BENCH_AUDIO_BENCH_DATA_H_
