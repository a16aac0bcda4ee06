// BatchFileReader: a source emitting, as TypedBatch, the batches of a
// batch-file queue written by BatchFileWriter or sluice.DataProvider
// (stages/batch_queue/README.md). Output "output".
//
//   stage {
//     name: "queue"
//     batch_file_reader { root: "/data/q" split: "train" }
//   }
//
// Promises:
// - Waits for <root>/meta.json (woken by inotify, re-checking every
//   `poll_interval_ms` in any case), then
//   fails the pipeline unless it is valid and every field of its
//   batch_schema has a dtype sluice carries (the error names the key or
//   field); the batches are TypedBatch-es of that schema.
// - Takes the files of <root>/queue/<split>/ in (timestamp, sequence) order;
//   dot-files (temporaries) and other names are never read.
// - Emits every batch of a file in order, then deletes the file: a file is
//   deleted only after all its batches were sent into the output channel,
//   so a consumer killed mid-file re-reads the file on restart
//   (at-least-once). The delete runs beside the reading of the next file
//   (a file being deleted is never read again); a failed delete is retried
//   `delete_attempts` times with doubling waits, then fails the pipeline.
// - A corrupt or truncated file is moved to <root>/quarantine/ and counted
//   (skip reason "corrupt_file"); reading goes on. A valid file with another
//   schema fails the pipeline with an error naming the field and leaves the
//   file in place: it is a producer misconfiguration, not data corruption.
// - When the queue is empty, waits for files: inotify wakes it when one is
//   renamed into place, and it re-scans every `poll_interval_ms` anyway
//   (the only way where inotify is unavailable). After `idle_timeout_ms`
//   without a file (when set) closes its output.
// - Legacy mode, when <root>/queue/ does not exist: reads the files
//   <root>/{split}_batches_*.safetensors (same format) once, in name order,
//   never deletes them (they are a precomputed data set), then closes its
//   output.
// - No blocking call on the executor: batches are read through
//   io::AsyncFileReader (io_uring) straight into the batch (one copy);
//   opening a file and deleting it run on the executor's BlockingIoPool.
//   Batch buffers are recycled through a BatchBufferPool.
#ifndef SLUICE_STAGES_BATCH_QUEUE_BATCH_FILE_READER_H_
#define SLUICE_STAGES_BATCH_QUEUE_BATCH_FILE_READER_H_

#include <sys/inotify.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/batch_buffer_pool.h"
#include "engine/stage.h"
#include "engine/typed_batch.h"
#include "io/batch_file_meta.h"
#include "stages/batch_queue/internal/batch_file.h"
#include "stages/batch_queue/internal/queue_watch.h"

namespace sluice::batch_queue {

class BatchFileReader final : public Stage {
 public:
  // Errors: inputs, a missing root or split, a split that is not
  // [A-Za-z0-9_]+, poll_interval_ms or delete_attempts of 0.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  void Stop() override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  BatchFileReader(const StageContext& context,
                  const BatchFileReaderConfig& config);
  asio::awaitable<void> Read();
  // Waits for meta.json and checks it; false when stopped or idle.
  asio::awaitable<bool> AwaitMeta();
  // Emits the batches of `dir`/`name`, then starts its Delete when
  // `consume`. False when the output was closed or the stage stopped.
  asio::awaitable<bool> ReadFile(std::string dir, std::string name,
                                 bool consume);
  // Batch `index` of `file`, read through the executor's file reader.
  asio::awaitable<absl::StatusOr<TypedBatch>> ReadBatch(const BatchFile& file,
                                                        int64_t index);
  // Deletes the consumed file `path` (named `name` in deleting_), retrying.
  asio::awaitable<void> Delete(std::string path, std::string name);
  void Quarantine(const std::string& dir, const std::string& name);
  // Waits for a change of the queue or one poll interval; false when
  // stopped or idle for too long.
  asio::awaitable<bool> IdleWait();

  const BatchFileReaderConfig config_;
  Channel<TypedBatch>* output_;
  StageRuntime runtime_{};
  QueueWatch watch_{IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE};
  std::mutex deleting_mu_;
  // Consumed files whose delete is under way: not to be read again.
  std::set<std::string> deleting_;
  // Recycles batch buffers (of the latest file's batch size).
  std::shared_ptr<BatchBufferPool> pool_;
  // meta.json's batch_schema and the tensors a batch of it is made of; set
  // once meta.json is read.
  std::vector<FieldSpec> schema_;
  std::vector<BatchTensorSpec> specs_;
  std::chrono::steady_clock::time_point idle_since_;
  std::atomic<uint64_t> files_consumed_{0};
  std::atomic<uint64_t> batches_emitted_{0};
  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<uint64_t> backlog_files_{0};
  std::atomic<uint64_t> wait_nanos_{0};
  std::atomic<uint64_t> delete_retries_{0};
};

}  // namespace sluice::batch_queue

#endif  // SLUICE_STAGES_BATCH_QUEUE_BATCH_FILE_READER_H_
