// What the lc0 benchmarks share: the generated data set, its chunks in
// memory, the stages' work with no engine around it (the bound a pipeline
// is measured against) and the training pipeline's config.
#ifndef SLUICE_BENCH_LC0_BENCH_SUPPORT_H_
#define SLUICE_BENCH_LC0_BENCH_SUPPORT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "io/gzip.h"
#include "proto/data_loader_config.pb.h"
#include "stages/lc0/format/packed_expander.h"
#include "stages/lc0/format/packed_record.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/record_validator.h"
#include "stages/lc0/format/tensor_batch.h"

namespace sluice::lc0::bench {

using Clock = std::chrono::steady_clock;
constexpr size_t kBatchSize = 1024;

double Seconds(Clock::duration d);

// Prints "<program>: <message>" to stderr and exits with status 1.
[[noreturn]] void Die(const std::string& message);

// Sets the program name Die() prints.
void SetProgramName(const std::string& name);

// The whole file; empty when it cannot be read.
std::string ReadFile(const std::string& path);

// The tar files of the data set in `dir` (sorted), generating `games`
// games there first, 100 per tar, when absent.
std::vector<std::string> EnsureData(const std::string& dir, int games);

// Every .gz member of `tars`, compressed (this also warms the page cache).
std::vector<std::string> ReadChunks(const std::vector<std::string>& tars);

// Gunzips `chunk` into `raw` and calls on_record(record, version) for each
// of its records in the V6 layout (read in place, as the pipeline does;
// `scratch` holds up-converted older records). Returns the number of
// records.
template <typename OnRecord>
uint64_t ForEachRecordOf(std::string_view chunk, std::string& raw,
                         V6TrainingRecord* scratch, OnRecord&& on_record) {
  if (!io::GunzipInto(chunk, 64 << 20, &raw).ok()) Die("bad chunk");
  const ChunkCheck check = CheckChunk(raw);
  for (size_t i = 0; i < check.record_count; ++i) {
    on_record(ViewAsV6(std::string_view(raw).substr(i * check.record_size,
                                                    check.record_size),
                       check.version, scratch),
              check.version);
  }
  return check.record_count;
}

// ForEachRecordOf every chunk in turn.
template <typename OnRecord>
uint64_t ForEachRecord(const std::vector<std::string>& chunks, std::string& raw,
                       V6TrainingRecord* scratch, OnRecord&& on_record) {
  uint64_t records = 0;
  for (const std::string& chunk : chunks) {
    records += ForEachRecordOf(chunk, raw, scratch, on_record);
  }
  return records;
}

// A batch of kBatchSize, every page written once: the first touch of a
// fresh 37 MB allocation costs ~9,000 page faults, which the pipeline (its
// batch buffers are pooled) does not pay in steady state, so neither may
// the loops it is measured against.
TensorBatch PrefaultedBatch();

// Single core: the per-position work of the pipeline's stages with no
// engine around it (no channels, coroutines or threads): gunzip, find the
// policy entries, validate and pack each record into a window of
// `window_frames` (the reservoir's size), then expand the packed window in
// random order, prefetching the next record, as the tensor generator does.
// Its batch is prefaulted and its window reused from one Run to the next,
// as the pipeline's batch buffers and reservoir are in steady state.
class StageWorker {
 public:
  explicit StageWorker(size_t window_frames);

  // Does the work over the chunks next_chunk() returns until it returns
  // nullptr, expanding what is left in the window at the end. Returns the
  // positions expanded.
  uint64_t Run(const std::function<const std::string*()>& next_chunk);

 private:
  void ExpandWindow();

  const size_t window_frames_;
  TensorBatch batch_;
  PackedExpander expander_;
  // Older records are up-converted here.
  std::unique_ptr<V6TrainingRecord> upconverted_;
  std::mt19937_64 random_{1};
  std::vector<PackedRecord> window_;
  size_t slot_ = 0;
  std::string raw_;
};

// A fresh StageWorker over every chunk once: positions per second.
double StageWorkOnce(const std::vector<std::string>& chunks,
                     size_t window_frames);

// proto/examples/lc0_train.textproto (read from the working directory: run
// from the repository) reading `dir`, on `threads` worker threads.
DataLoaderConfig TrainConfig(const std::string& dir, unsigned threads,
                             bool deterministic = false);

// The reservoir size of the pipeline's sampler.
size_t ReservoirSize(const DataLoaderConfig& config);

}  // namespace sluice::lc0::bench

#endif  // SLUICE_BENCH_LC0_BENCH_SUPPORT_H_
