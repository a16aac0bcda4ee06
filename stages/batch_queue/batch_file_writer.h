// BatchFileWriter: a sink writing the TypedBatch-es of its one input (any
// workload's tensors) into a batch-file queue (stages/batch_queue/README.md),
// for a consumer process (BatchFileReader, or sluice.DatasetConsumer in
// Python).
//
//   stage {
//     name: "queue"  input: "tensors"
//     batch_file_writer { root: "/data/q" split: "train" dataset_name: "lc0"
//                         batch_size: 1024 batches_per_file: 16 }
//   }
//
// Promises:
// - When the first batch arrives, writes <root>/meta.json when absent, its
//   batch_schema the batch's tensors (name, dtype, shape per example; role
//   "input" for the first, "target" for the others); when present, fails
//   the pipeline unless it matches the config and that schema (the error
//   names the key or field). Every later batch must have the same schema.
// - Groups `batches_per_file` batches of the same size per file; a batch of
//   another size (the final partial batch) closes the group. When the input
//   ends, the remaining group is written (unless the stage was stopped).
// - Files appear atomically (temporary dot-file, fsync, rename); sequence
//   numbers continue from 1 + the largest on disk; temporaries left by a
//   killed writer are removed on start. One writer per split.
// - Before each file, while the split holds `max_backlog_files` or more
//   files, waits with no busy loop: inotify wakes it when the consumer
//   deletes a file, and it re-checks every `poll_interval_ms` anyway (the
//   only way where inotify is unavailable); Stop() ends the wait at once,
//   dropping the group.
// - A write error (a full disk, say) fails the pipeline with its message;
//   the temporary is removed.
// - File writes (write, fsync, rename) run on the executor's BlockingIoPool,
//   never on an executor thread; one file at a time.
#ifndef SLUICE_STAGES_BATCH_QUEUE_BATCH_FILE_WRITER_H_
#define SLUICE_STAGES_BATCH_QUEUE_BATCH_FILE_WRITER_H_

#include <sys/inotify.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "engine/typed_batch.h"
#include "io/batch_file_meta.h"
#include "stages/batch_queue/internal/queue_watch.h"

namespace sluice::batch_queue {

class BatchFileWriter final : public Stage {
 public:
  // Errors: a missing root, split, dataset_name or batch_size, a split that
  // is not [A-Za-z0-9_]+, batches_per_file, max_backlog_files or
  // poll_interval_ms of 0, an input that is not one TypedBatch channel.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  void Stop() override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  BatchFileWriter(const StageContext& context,
                  const BatchFileWriterConfig& config,
                  Channel<TypedBatch>* input);
  asio::awaitable<void> Write();
  // Waits for room, then writes `group` as the next file and clears it.
  // False when stopped while waiting.
  asio::awaitable<bool> Flush(std::vector<TypedBatch>& group);
  // Writes or checks meta.json for batches of `schema`; finds the next
  // sequence number.
  void PrepareRoot(const std::vector<FieldSpec>& schema);

  const BatchFileWriterConfig config_;
  const std::string dir_;
  Channel<TypedBatch>* input_;
  StageRuntime runtime_{};
  QueueWatch watch_{IN_DELETE | IN_MOVED_FROM};
  int64_t next_sequence_ = 1;
  std::atomic<uint64_t> files_written_{0};
  std::atomic<uint64_t> batches_written_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> backlog_files_{0};
  std::atomic<uint64_t> wait_nanos_{0};
};

}  // namespace sluice::batch_queue

#endif  // SLUICE_STAGES_BATCH_QUEUE_BATCH_FILE_WRITER_H_
