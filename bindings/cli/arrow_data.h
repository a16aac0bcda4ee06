// Arrow IPC data for the CLI: `sluice gen arrow` (synthetic rows written
// with io::arrow::ArrowFileWriter) and the Arrow part of `sluice bench io`
// (every record batch read through io::arrow::ArrowFileReader).
//
//   absl::StatusOr<ArrowDataset> written = WriteArrowDataset(
//       {.dir = "data", .rows = 100000, .files = 4});
//   absl::StatusOr<ArrowReadResult> read = MeasureArrowRead(written->paths);
#ifndef SLUICE_BINDINGS_CLI_ARROW_DATA_H_
#define SLUICE_BINDINGS_CLI_ARROW_DATA_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::cli {

struct ArrowDatasetOptions {
  std::string dir;
  int64_t rows = 0;
  // Bytes of each row's binary "blob" column.
  int64_t row_bytes = 1024;
  int64_t files = 1;
  int64_t rows_per_batch = 1024;
  uint64_t seed = 1;
};

// Float32 values per row of the "embedding" column (1 KiB).
inline constexpr int32_t kArrowEmbeddingSize = 256;

struct ArrowDataset {
  std::vector<std::string> paths;
  int64_t rows = 0;
  int64_t record_batches = 0;
  int64_t file_bytes = 0;
};

// Writes rows 0..rows-1 into `files` files "data-0000N-of-0000F.arrow"
// (N from 1), split evenly and in order: "blob" binary (row_bytes
// pseudo-random bytes), "embedding" fixed_size_list<float32, 256> (row +
// k / 256) and "label" int64 (row % 1000). The same seed writes the same
// bytes.
absl::StatusOr<ArrowDataset> WriteArrowDataset(
    const ArrowDatasetOptions& options);

// True when the file starts with the Arrow IPC file magic ("ARROW1").
bool IsArrowFile(const std::string& path);

struct ArrowReadResult {
  int64_t rows = 0;
  int64_t record_batches = 0;
  uint64_t bytes = 0;  // file bytes of the files read
  double seconds = 0;
  double RowsPerSecond() const { return seconds > 0 ? rows / seconds : 0; }
  double GigabytesPerSecond() const {
    return seconds > 0 ? bytes / seconds / 1e9 : 0;
  }
};

// Reads every record batch of every file through ArrowFileReader (one
// recycled buffer, one batch in flight) on a one-thread executor.
absl::StatusOr<ArrowReadResult> MeasureArrowRead(
    const std::vector<std::string>& paths, bool use_io_uring = true);

// `sluice gen arrow DIR --rows N [--row-bytes B] [--files F]
// [--rows-per-batch R] [--seed S]`; `args` are the words after "gen".
// Returns the exit code (2 for a usage error).
int RunGenArrowCommand(const std::vector<std::string>& args, std::ostream& out,
                       std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_ARROW_DATA_H_
