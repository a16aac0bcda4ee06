// Helpers for the reliability tests: generated data sets whose positions
// are known per file, position counting and the process's resident memory.
#ifndef SLUICE_TESTS_RELIABILITY_DATA_SET_H_
#define SLUICE_TESTS_RELIABILITY_DATA_SET_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "stages/lc0/format/data_generator.h"
#include "tests/testing/sanitizers.h"

namespace sluice::lc0::testing {

// Games per tar of the damaged-input and shutdown tests' data sets: fewer
// under a sanitizer.
inline constexpr int kGamesPerTar = ::sluice::testing::UnlessSanitizer(10, 4);

// How many times each position hash occurs (see PositionHash).
using HashCounts = std::map<uint64_t, int>;

// Files written by WriteDataSet, with the positions of each.
struct DataSet {
  std::vector<std::string> paths;  // in write order
  std::map<std::string, HashCounts> by_file;
  HashCounts all;
  uint64_t positions = 0;
};

// Writes `output.games` games of `seed` (V6, input format 1) with WriteGames
// and records the hash of every position's tensors, file by file.
DataSet WriteDataSet(uint64_t seed, const OutputOptions& output);

// Adds `more` into `into`.
void AddCounts(const HashCounts& more, HashCounts* into);

// Pulls every batch of output `alias` until end of stream, counting
// positions; returns the number of batches.
size_t CountPositions(DataLoader& loader, const std::string& alias,
                      HashCounts* counts);

// The lc0_train example over `dir`, small enough for these tests' data
// sets: 2 worker threads, metrics every 50 ms, a reservoir of 4000 frames
// filled to 1000 before the first batch (1600 and 400 under
// a sanitizer), batches of `batch_size`.
DataLoaderConfig SmallTrainConfig(const std::string& dir, int batch_size);

// Resident set size of this process, in bytes (/proc/self/statm).
uint64_t ResidentBytes();

}  // namespace sluice::lc0::testing

#endif  // SLUICE_TESTS_RELIABILITY_DATA_SET_H_
