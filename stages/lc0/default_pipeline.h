// The default lc0 pipelines (proto/examples/lc0_train.textproto and
// lc0_eval.textproto, compiled in) with the knobs users change most, so
// nobody has to write the proto by hand.
//
//   SLUICE_ASSIGN_OR_RETURN(
//       DataLoaderConfig config,
//       MakeLc0Pipeline({.directories = {"/data/lc0"}, .batch_size = 512}));
#ifndef SLUICE_STAGES_LC0_DEFAULT_PIPELINE_H_
#define SLUICE_STAGES_LC0_DEFAULT_PIPELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/data_loader_config.pb.h"

namespace sluice::lc0 {

enum class PipelineMode {
  kTrain,  // watch the directories, shuffled window, endless
  kEval,   // one pass over the files present, every position once, then end
};

// Overrides of the default pipeline; unset fields keep the file's values.
struct PipelineOptions {
  std::vector<std::string> directories;  // required, at least one
  PipelineMode mode = PipelineMode::kTrain;
  std::optional<uint64_t> batch_size;
  std::optional<uint64_t> chunk_pool_size;  // train only
  std::optional<uint64_t> reservoir_size;
  std::optional<uint64_t> min_fill;
  std::optional<uint64_t> seed;
  std::optional<uint32_t> worker_threads;  // 0: one per core
  std::optional<uint32_t> input_format;    // unpacker and tensor generator
  // Data-parallel training: this process is `rank` of `world_size` and
  // reads only its shard (DataLoaderConfig.rank / world_size).
  std::optional<uint32_t> rank;
  std::optional<uint32_t> world_size;
  // The same batches at any thread count (DataLoaderConfig.deterministic).
  std::optional<bool> deterministic;
  // Rescore every game between the pool and the unpacker (a stage named
  // "rescorer", stages/lc0/chunk_rescorer.h), e.g.
  //   ChunkRescorerConfig rescore;
  //   rescore.add_syzygy_paths("/syzygy");
  //   rescore.mutable_deblunder()->set_threshold(0.1);
  std::optional<ChunkRescorerConfig> rescore;
};

// The text-format config the mode starts from (DATA_DIR placeholder
// directory).
std::string_view DefaultPipelineText(PipelineMode mode);

// The default pipeline with `options` applied. InvalidArgument names a
// bad option (no directory, zero batch size, ...); the factory checks the
// rest when the pipeline is built.
absl::StatusOr<DataLoaderConfig> MakePipeline(const PipelineOptions& options);

// Puts a "rescorer" stage configured by `rescore` in front of `config`'s
// chunk unpacker (taking the unpacker's input).
void InsertRescorer(const ChunkRescorerConfig& rescore,
                    DataLoaderConfig& config);

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_DEFAULT_PIPELINE_H_
