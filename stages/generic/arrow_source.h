// ArrowSource: the rows of Arrow IPC files as Examples. Input: one channel
// of DiscoveredFile; output "output" of Example.
//
//   stage { name: "rows" input: "files"
//           arrow_source { mode: EVAL column { name: "audio.bytes"
//                                              field: "audio" }
//                          column { name: "label" } } }
//
// 1. Survey. Files named `*.arrow`, `*.feather` or `*.ipc` are collected
//    until the end-of-scan marker (or the input's end); others are skipped
//    (unknown_file_type). Files discovered later (watch mode) are not read:
//    the index needs a fixed file list. The paths are sorted; each file's
//    format is told by its magic (ARROW1: file format, else stream), its
//    row count read from the record batches' metadata (file format: the
//    footer's blocks, metadata only) or by a first pass (stream format),
//    and its columns checked against the config. A file-format file read
//    in row blocks (ROW_BLOCKS, fixed-size-row columns without nulls, one
//    rank) also keeps where those columns lie in each record batch, found
//    from the same metadata: its reads need no metadata read, pass after
//    pass, while the file keeps the version surveyed (inode, size,
//    modification and change time; io/arrow/file_version.h; a file
//    written or replaced since is located again). Up to 8 files are
//    surveyed at once (their reads overlap: on a cold page cache 200 files
//    took 0.08 s instead of 0.14 s to the first batch). A file's rows get the
//    indexes [offset, offset + rows), offset being the rows of the files
//    before it: `index` is stable across runs over the same files.
// 2. Passes. EVAL: one pass in sorted order, `seed` 0, then the output
//    closes. TRAIN: pass p (from 0) uses pass_seed = pipeline seed + p,
//    shuffles the file order with StableRandom(pass_seed), and gives each
//    row seed = pass_seed + index (uint64, wrapping; int64 bits), as seed
//    004's loader does; it loops until the pipeline stops (or a whole pass
//    yields no row: the stage then ends with a warning). Rows of a file
//    come in file order.
// 3. Rows. Each mapped column becomes a field: binary / utf8 (and large_)
//    a uint8 1-D view into the record batch; list, large_list and
//    fixed_size_list of int8/16/32/64, uint8 or float16/32/64 a 1-D view of
//    that dtype; int8/16/32/64, uint8, float16/32/64 a scalar of the same
//    dtype; uint16 and uint32 a scalar widened to int64; bool a bool
//    scalar. uint64 (and lists of bool, uint16/32/64) are refused: the file
//    is skipped (unsupported_column_type). Views share the record batch
//    (keep_alive): no copy, and the batch's buffer is recycled for later
//    reads once the last view of it is gone. So every row queued in the
//    output (1024 by default) or held downstream keeps its whole batch in
//    memory: for large rows (audio clips) give the output a small
//    capacity (proto/examples/audio_eval.textproto: 64).
//
// 4. Output. Unset, it is ROW_BLOCKS when the one stage that takes it is a
//    batcher, EXAMPLES otherwise (StageContext::consumer_types()).
//    EXAMPLES: one Example per row, fields as in 3, plus
//    `index` and `seed` int64 scalars, named by interned FieldNames (no
//    string per field) and handed to the output up to 64 rows of one
//    record batch at a time, under one lock (Channel::SendAll). ROW_BLOCKS:
//    ExampleBlocks instead (stages/generic/example_block.h), for a batcher
//    right after the source: maximal runs of consecutive good rows of one
//    record batch whose binary and list values have equal lengths, each column
//    one contiguous buffer (a view into the record batch; bool and widened
//    uint16/uint32 values converted, and `index` and `seed`, in a buffer of
//    the block's own). The same rows, values and skips as EXAMPLES, without
//    a per-row cost. Blocks of block_rows (see the config) are read up to
//    one per worker thread at once (at most 4, and within `readahead`),
//    each by a coroutine any worker may run, and delivered in row order:
//    on a warm page cache the kernel's copies then run on every core (2
//    threads: about 1.0x a one-thread pread loop, against 0.75-0.78
//    reading one block at a time; docs/performance.md). A failed block
//    read skips the rest of its file (read_error) after the blocks before
//    it.
//
// Ranks: with DataLoaderConfig.world_size > 1 only this rank's rows are
// read: of each file, one contiguous run of rows (engine/rank_shard.h
// RowRank), so ranks read disjoint shards that together hold every row,
// each within one row per file of its share. `index` stays the row's
// place in the whole data set.
//
// Checkpoints (deterministic mode, either output; engine/checkpoint.h):
// each example's origin names it by ref {unit = pass << 32 | file number
// (its place in the sorted data set), index = row of the file} and places
// it by cursor {position = the file's read in this run's stream, ordinal =
// row of the file}. A checkpoint saves the data set (paths, row counts and
// sizes), the point the stream resumes at (pass, file of the pass's order,
// row), with row blocks where the stream stood between block ends (so
// resumed blocks end where the uninterrupted run's did), and the rows the
// next stages need read again. A resumed source reads those rows first
// (origin().restored), then the stream from that point, over the
// checkpoint's data set: a file gone or changed since (another row count
// or size) is warned about, counted (checkpoint_source_gone,
// checkpoint_source_changed) and read as empty;
// files new since are warned about, counted (checkpoint_source_new) and
// not read. Resumed from the checkpoints of every rank of a run on another
// number of ranks (an elastic resume), each new rank reads its part of
// the rest of the old ranks' interrupted passes first, after its share of
// their reservoirs' rows (or of a VIEWS_FIRST batcher's held rows), then goes
// on from the next pass with its own shard (internal/arrow_source_merge.h). A
// block (ROW_BLOCKS) carries its first row's origin; the rows after it follow
// (ExampleBlock::origin).
//
// Memory: at most `readahead` record batches are being read, queued or
// emitted; batches still viewed by examples downstream stay alive until
// those examples are gone (the downstream channels bound how many). A
// surveyed layout takes 8 bytes per record batch and block column, plus 8
// per record batch.
//
// Skipped and counted (`skipped`), with a rate-limited log naming the stage,
// file and column, the stage going on: files: unknown_file_type,
// file_missing, permission_denied, not_arrow (no magic and no readable
// stream), damaged_file (truncated, bad metadata), unsupported_feature
// (compression, dictionaries, ...), limit_exceeded, read_error,
// missing_column, unsupported_column_type, file_changed (rows beyond the
// surveyed count); rows: null_value (a mapped value or a parent struct is
// null), value_too_large (over max_value_bytes).
#ifndef SLUICE_STAGES_GENERIC_ARROW_SOURCE_H_
#define SLUICE_STAGES_GENERIC_ARROW_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "io/arrow/record_batch.h"
#include "io/async_file_reader.h"
#include "stages/generic/discovered_file.h"
#include "stages/generic/example.h"
#include "stages/generic/example_block.h"
#include "stages/generic/internal/arrow_dataset.h"
#include "stages/generic/internal/arrow_source_checkpoint.h"

namespace sluice {

class ArrowBufferPool;

class ArrowSource final : public Stage {
 public:
  // Validates the config (at least one column, unique field names, none
  // called "index" or "seed", readahead at least 1); needs exactly one
  // input of DiscoveredFile.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);
  ~ArrowSource() override;

  void Start(const StageRuntime& runtime) override;
  // Memory (engine/memory_model.h): readahead + 1 record batches and the queued
  // rows (arrow_source_memory.cc states the estimates).
  void DescribeMemory(MemoryModelBuilder& builder) const override;
  void Stop() override;
  bool ShardsByRank() const override { return true; }
  void PrepareCheckpoints() override;
  void Acknowledge(uint64_t consumed) override;
  // Resumed and acknowledged by cursor: {position = file read, ordinal =
  // row of the file}.
  ResumeUnit resume_unit() const override { return ResumeUnit::kCursors; }
  absl::StatusOr<std::optional<ResumeRequest>> SaveCheckpoint(
      const ResumeRequest& downstream, std::string* state) override;
  absl::Status RestoreCheckpoint(const std::string& state) override;
  // Elastic resume: merges the old ranks' states (arrow_source_merge.h)
  // and ends the walk; references keep their meaning.
  absl::StatusOr<std::optional<ElasticRequest>> PlanElasticResume(
      const std::vector<std::string>& states, const ElasticRequest& downstream,
      ElasticResume& resume) override;
  absl::Status FinishElasticResume(const ElasticResume& resume) override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  using DatasetFile = ArrowDatasetFile;
  using FileRead = ArrowFileRead;
  using LoadedBatch = ArrowLoadedBatch;

  ArrowSource(const StageContext& context, const ArrowSourceConfig& config,
              Channel<DiscoveredFile>* input);
  asio::awaitable<void> Read();
  asio::awaitable<void> Emit();
  asio::awaitable<void> EmitBlocks();
  // The runs [begin, end) of `loaded`'s rows (batch-relative) that
  // ROW_BLOCKS emits: this rank's from the read's first row, or a resume's
  // restored rows.
  std::vector<std::pair<int64_t, int64_t>> RowRunsToEmit(
      const LoadedBatch& loaded) const;
  asio::awaitable<std::vector<std::string>> Discover();
  // Numbers every file's rows; for file-format files read in row blocks,
  // also locates their block columns (DatasetFile::layout).
  asio::awaitable<void> Survey(std::vector<std::string> paths);
  // Whether file-format files of fixed-size-row columns are read in row
  // blocks (ReadRowBlocks): block rows are set and this is the only rank.
  bool ReadsRowBlocks() const;
  // Reads one file for one pass; false once the stage is stopping.
  asio::awaitable<bool> ReadFile(const DatasetFile* file, FileRead read);
  // Hands a batch to the emitter, counting `record_batches` of the file's
  // as read; its buffer goes back to the pool at `home` (the CPU that read
  // it). False once the stage is stopping.
  asio::awaitable<bool> Deliver(io::arrow::RecordBatch batch, unsigned home,
                                const DatasetFile* file, int64_t first_row,
                                const FileRead& read, int record_batches);
  // A resume: reads the rows the checkpoint names; false once stopping.
  asio::awaitable<bool> ReadRestoredRows();
  // An elastic resume: reads its runs of the old ranks' interrupted
  // passes; false once stopping.
  asio::awaitable<bool> ReadRestOfPass();
  void SkipFile(std::string_view reason, const std::string& message);
  // Counts and logs (rate-limited) a file opened buffered although
  // direct_io was asked for; `refusal` says why (empty: nothing to note).
  void NoteDirectIoRefusal(const std::string& path, const std::string& refusal);
  void SkipRow(std::string_view reason, const DatasetFile& file,
               const std::string& column, int64_t row);

  const ArrowSourceConfig config_;
  const uint32_t rank_;
  const uint32_t world_size_;
  const uint64_t seed_;
  Channel<DiscoveredFile>* const input_;
  // The output: one of the two, by config.output.
  Channel<Example>* const output_;
  Channel<ExampleBlock>* const block_output_;
  // Batches from the reader to the emitter, and the permits that bound the
  // batches in flight to `readahead`.
  Channel<LoadedBatch> batches_;
  Channel<bool> permits_;
  std::shared_ptr<ArrowBufferPool> pool_;
  io::AsyncFileReader* reader_ = nullptr;
  // Sorted by path; written by the survey before any batch is read.
  ArrowDataset dataset_;
  // Batches delivered so far (the Read coroutine only).
  uint64_t delivered_ = 0;
  // block_rows as configured, or else the consumer's preferred group
  // size (set at Start); 0: a block per record batch.
  uint64_t block_rows_ = 0;
  // Rows delivered modulo block_rows (the reading coroutine's): where the
  // output stream stands between two multiples of block_rows.
  int64_t block_phase_ = 0;
  // Row blocks read at once: one per worker thread, within `readahead` and
  // a bound (Start).
  size_t block_reads_at_once_ = 1;
  // Checkpoints: a resume's start, and the stream's file reads.
  ArrowCheckpointState checkpoint_;
  // An elastic resume's merged state, between planning and finishing.
  std::string merged_state_;

  std::atomic<uint64_t> files_{0};
  std::atomic<uint64_t> record_batches_{0};
  std::atomic<uint64_t> rows_emitted_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> passes_{0};
  std::atomic<uint64_t> dataset_files_{0};
  std::atomic<uint64_t> dataset_rows_{0};
  std::atomic<uint64_t> direct_io_refused_{0};
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_ARROW_SOURCE_H_
