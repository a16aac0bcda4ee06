// arrow_source's data set and what is read of it: each file as the survey
// found it (ArrowDatasetFile), which rows of a file one read is for and how
// they are tagged (ArrowFileRead), and a record batch on its way from the
// reading coroutine to the emitting one (ArrowLoadedBatch), shared by the
// examples that view it (ShareRecordBatch).
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_DATASET_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_DATASET_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/file_version.h"
#include "io/arrow/record_batch.h"
#include "stages/generic/internal/arrow_buffer_pool.h"
#include "stages/generic/internal/arrow_column_plan.h"

namespace sluice {

// One file of the data set, as the survey found it.
struct ArrowDatasetFile {
  std::string path;
  bool stream = false;
  int64_t rows = 0;
  int64_t offset = 0;  // index of the file's first row
  std::vector<ArrowColumnPlan> plan;
  uint64_t size = 0;    // bytes, when surveyed
  uint32_t number = 0;  // its place in the sorted data set
  // A resume found it gone or changed since the checkpoint: read as empty.
  bool gone = false;
  // Where the block reads' columns lie, found by the survey (file format,
  // block reads, no nulls in those columns), and the version of the file
  // it holds for: a read of that version needs no metadata read.
  std::optional<io::arrow::ArrowFileReader::ColumnLayout> layout;
  io::arrow::FileVersion version;
};

// Which rows of a file one read is for, and how its examples are tagged.
struct ArrowFileRead {
  uint64_t pass = 0;
  // The read's place in this run's stream (the examples' cursor).
  uint64_t position = 0;
  // Rows of the file before this one are not emitted (a resume's first
  // file).
  int64_t from_row = 0;
  // When at least 0: the rows [from_row, to_row) are emitted instead of
  // this rank's shard of the file (an elastic resume's rest of a pass).
  int64_t to_row = -1;
  // A resume's restore: only these rows of the file (sorted), tagged
  // restored; nullptr for a read of the stream.
  const std::vector<int64_t>* only_rows = nullptr;
};

// The data set, sorted by path: file i has number i.
using ArrowDataset = std::vector<std::unique_ptr<ArrowDatasetFile>>;

// A record batch on its way from the reader to the emitter.
struct ArrowLoadedBatch {
  std::shared_ptr<const io::arrow::RecordBatch> batch;
  const ArrowDatasetFile* file = nullptr;
  int64_t first_row = 0;  // the batch's first row within the file
  int64_t rows = 0;       // rows to emit (may be cut by file_changed)
  uint64_t pass_seed = 0;
  ArrowFileRead read;
  // The batch's rows to emit (batch-relative), when not [0, rows).
  std::optional<std::vector<int64_t>> only_rows;
};

// The files of pass `pass_seed` (pipeline seed + pass) in reading order:
// EVAL, the data set's; TRAIN, shuffled by StableRandom(pass_seed)
// (Fisher-Yates over the data set's order, so the order depends on the
// seed only).
std::vector<const ArrowDatasetFile*> FilesOfPass(const ArrowDataset& dataset,
                                                 bool train,
                                                 uint64_t pass_seed);

// The rows [begin, end) of `loaded` (batch-relative) that belong to rank
// `rank` of `world_size`: [0, rows) when world_size is 1; otherwise those
// of the rank's run of the file's rows (engine/rank_shard.h), possibly
// none. A read of a run of rows (ArrowFileRead::to_row) gives that run's
// rows instead, whatever the rank.
std::pair<int64_t, int64_t> RankRowsOfBatch(const ArrowLoadedBatch& loaded,
                                            uint32_t rank, uint32_t world_size);

// The rows of a record batch holding the file's rows from `first_row`
// (`rows` of them) that a resume's restore `read` wants, batch-relative;
// nullopt for a read of the stream (read.only_rows unset).
std::optional<std::vector<int64_t>> RestoredRowsOfBatch(
    const ArrowFileRead& read, int64_t first_row, int64_t rows);

// `batch` shared by the examples or blocks that view it: its buffer goes
// back to `pool` at `home` when the last of them is gone.
std::shared_ptr<const io::arrow::RecordBatch> ShareRecordBatch(
    io::arrow::RecordBatch batch, std::shared_ptr<ArrowBufferPool> pool,
    unsigned home);

// Bytes of the validity and values buffers of `batch`'s columns and their
// children.
int64_t RecordBatchValueBytes(const io::arrow::RecordBatch& batch);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_DATASET_H_
