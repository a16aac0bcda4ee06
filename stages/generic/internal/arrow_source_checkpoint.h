// arrow_source's checkpoint state (deterministic mode, either output;
// engine/checkpoint.h): the point a resumed run's stream starts at, the
// file reads of this run's stream not yet acknowledged downstream, and
// what a checkpoint saves: the data set (paths, row counts, sizes), the
// point the stream resumes at (pass, file of the pass's order, row) and
// the rows the next stages need read again, and after an elastic resume
// the runs of rows left of the old ranks' interrupted passes
// (arrow_source_merge.h) that are still to be read.
//
//   ArrowCheckpointState state;
//   state.Restore(saved);                    // before Start, on a resume
//   read.position = state.LogRead(pass, slot, from_row, phase);
//   // run i of rest_of_pass(), from its first row:
//   read.position = state.LogRead(pass, 0, begin, phase, i);
//   state.Save(downstream, dataset, name, &bytes);
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_SOURCE_CHECKPOINT_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_SOURCE_CHECKPOINT_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "engine/checkpoint.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/generic/internal/arrow_dataset.h"

namespace sluice {

// Thread-safe: the reading coroutine logs reads while the pipeline saves
// and acknowledges from other threads.
class ArrowCheckpointState {
 public:
  // Where the stream of a run starts: pass, file of the pass's order, row.
  struct StreamPoint {
    uint64_t pass = 0;
    uint64_t slot = 0;
    int64_t row = 0;
  };

  // Before Start: whether reads are logged for checkpoints (a source on
  // the chain of a checkpointed pipeline's output).
  void set_logging(bool logging) { logging_ = logging; }
  bool logging() const { return logging_; }

  // Before Start: a resume from `state` (SaveCheckpoint's). Errors: it
  // does not parse, or resumes at a negative row.
  absl::Status Restore(const std::string& state);
  // Whether this run resumes a stream that had begun: its data set is then
  // the checkpoint's (AdoptSavedDataSet) and its restored rows are read
  // first (RestoredRows).
  bool resuming() const {
    return resume_from_.has_value() && resume_from_->started();
  }
  // The checkpoint resumed from; only when resuming().
  const ArrowSourceCheckpoint& resume_from() const { return *resume_from_; }
  // Where this run's stream starts (zero unless resuming).
  const StreamPoint& start() const { return start_; }
  // Where the stream's row blocks stand at its start (rows delivered
  // before it; the caller takes it modulo block_rows): 0 unless resuming.
  int64_t start_phase() const { return start_phase_; }
  // The runs of rows read before the stream (after an elastic resume;
  // empty otherwise).
  const std::vector<ArrowSourceCheckpoint::RowRun>& rest_of_pass() const {
    return rest_of_pass_;
  }

  // The data set is final (surveyed, or adopted from the checkpoint):
  // checkpoints from now on save it.
  void MarkSurveyed();
  // A file read of the stream begins at row `from_row`, its row blocks at
  // `phase` (rows delivered before it, modulo block_rows): returns its
  // position (the examples' cursor.position), logged when logging().
  // `run`: the read of rest_of_pass()[run], or -1 for file `slot` of the
  // pass's order.
  uint64_t LogRead(uint64_t pass, uint64_t slot, int64_t from_row,
                   int64_t phase, int64_t run = -1);
  // Reads before position `consumed` are no longer needed.
  void Acknowledge(uint64_t consumed);

  // Serializes to `state` the checkpoint the pipeline asks for: the stream
  // resumes at file read downstream.from, its row downstream.skip, after
  // downstream.restore is read again. `dataset` is read only once
  // MarkSurveyed was called. Errors name `stage`: Unimplemented when not
  // logging, Internal when that read is no longer logged.
  absl::Status Save(const ResumeRequest& downstream,
                    const ArrowDataset& dataset, const std::string& stage,
                    std::string* state);

 private:
  // A file read of the stream.
  struct LoggedRead {
    uint64_t position = 0;
    uint64_t pass = 0;
    uint64_t slot = 0;
    int64_t run = -1;
    // The row blocks' phase at row 0 of the file, were it read from there:
    // the phase at row r is phase_at_row0 + r (modulo block_rows).
    int64_t phase_at_row0 = 0;
  };

  bool logging_ = false;
  std::optional<ArrowSourceCheckpoint> resume_from_;
  StreamPoint start_;
  int64_t start_phase_ = 0;
  std::vector<ArrowSourceCheckpoint::RowRun> rest_of_pass_;
  std::mutex mu_;
  bool surveyed_ = false;         // under mu_
  std::deque<LoggedRead> reads_;  // under mu_
  uint64_t next_position_ = 0;    // under mu_
};

// Called per file of a resumed data set that is not as saved, and once for
// the files new since: the skip reason (checkpoint_source_changed,
// checkpoint_source_gone, checkpoint_source_new), how many files, and a
// message for the log.
using ResumeWarningFunction = std::function<void(
    std::string_view reason, uint64_t files, const std::string& message)>;

// A resume: replaces the surveyed `dataset` by `saved`'s data set in its
// order, numbering and offsets. A file gone or changed since (another row
// count or size) is kept as `gone` (read as empty); files new since are
// left out. Each is reported to `warn`. Returns the data set's rows.
int64_t AdoptSavedDataSet(const ArrowSourceCheckpoint& saved,
                          ArrowDataset& dataset,
                          const ResumeWarningFunction& warn);

// A resume's rows to read again, by (pass, file number): sorted, each
// once.
std::map<std::pair<uint64_t, uint32_t>, std::vector<int64_t>> RestoredRows(
    const ArrowSourceCheckpoint& saved);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_SOURCE_CHECKPOINT_H_
