// The directory layout of a batch-file queue:
//
//   <root>/meta.json
//   <root>/queue/<split>/{utc_millis}-{seq:06}-{num_batches}.safetensors
//   <root>/queue/<split>/.NAME.tmp         (being written; never read)
//   <root>/quarantine/<split>-NAME         (corrupt files, moved aside)
//   <root>/{split}_batches_*.safetensors   (legacy, read when queue/ is absent)
//
//   SLUICE_ASSIGN_OR_RETURN(std::vector<QueueFile> files,
//                           ListQueueFiles(QueueDir(root, "train")));
#ifndef SLUICE_IO_BATCH_QUEUE_LAYOUT_H_
#define SLUICE_IO_BATCH_QUEUE_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice {

// A final batch file of a queue directory, from its name.
struct QueueFile {
  int64_t timestamp_ms = 0;
  int64_t sequence = 0;
  int64_t num_batches = 0;
  std::string name;
};

std::string QueueDir(const std::string& root, const std::string& split);
std::string QuarantineDir(const std::string& root);

// "{timestamp_ms}-{sequence:06}-{num_batches}.safetensors".
std::string QueueFileName(int64_t timestamp_ms, int64_t sequence,
                          int64_t num_batches);
// The parts of a final file name; nullopt for anything else (temporaries,
// dot-files, other names).
std::optional<QueueFile> ParseQueueFileName(std::string_view name);

// The final files of `dir` in (timestamp, sequence) order; an empty list
// when `dir` does not exist.
absl::StatusOr<std::vector<QueueFile>> ListQueueFiles(const std::string& dir);

// 1 + the largest sequence among the final files of `dir` (1 when none).
absl::StatusOr<int64_t> NextQueueSequence(const std::string& dir);

// The legacy files `root`/{split}_batches_*.safetensors in name order (only
// `name` is set).
absl::StatusOr<std::vector<QueueFile>> ListLegacyFiles(
    const std::string& root, const std::string& split);

// Removes the hidden temporaries (".*.tmp") of `dir`: the leftovers of a
// writer killed mid-write. Only the split's one writer may call it.
absl::Status RemoveTemporaries(const std::string& dir);

// mkdir -p `dir`.
absl::Status MakeDirs(const std::string& dir);

}  // namespace sluice

#endif  // SLUICE_IO_BATCH_QUEUE_LAYOUT_H_
