#include "stages/lc0/default_pipeline.h"

#include "google/protobuf/text_format.h"
#include "stages/lc0/default_pipeline_text.h"

namespace sluice::lc0 {

std::string_view DefaultPipelineText(PipelineMode mode) {
  return mode == PipelineMode::kTrain ? internal::kLc0TrainText
                                      : internal::kLc0EvalText;
}

absl::StatusOr<DataLoaderConfig> MakePipeline(const PipelineOptions& options) {
  if (options.directories.empty()) {
    return absl::InvalidArgumentError(
        "lc0 pipeline: at least one data directory is required");
  }
  if (options.batch_size.has_value() && *options.batch_size == 0) {
    return absl::InvalidArgumentError(
        "lc0 pipeline: batch_size must be at least 1");
  }
  DataLoaderConfig config;
  const std::string text(DefaultPipelineText(options.mode));
  if (!google::protobuf::TextFormat::ParseFromString(text, &config)) {
    return absl::InternalError("lc0 pipeline: the built-in config is broken");
  }
  if (options.seed) config.set_seed(*options.seed);
  if (options.rank) config.set_rank(*options.rank);
  if (options.world_size) config.set_world_size(*options.world_size);
  if (options.deterministic) config.set_deterministic(*options.deterministic);
  if (options.worker_threads)
    config.set_worker_threads(*options.worker_threads);
  for (StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_file_path_provider()) {
      stage.mutable_file_path_provider()->clear_directory();
      for (const std::string& directory : options.directories) {
        stage.mutable_file_path_provider()->add_directory(directory);
      }
    }
    if (stage.has_shuffling_chunk_pool() && options.chunk_pool_size) {
      stage.mutable_shuffling_chunk_pool()->set_chunk_pool_size(
          *options.chunk_pool_size);
    }
    if (stage.has_chunk_unpacker() && options.input_format) {
      stage.mutable_chunk_unpacker()->set_input_format(*options.input_format);
    }
    if (stage.has_shuffling_frame_sampler()) {
      auto* sampler = stage.mutable_shuffling_frame_sampler();
      if (options.reservoir_size) {
        sampler->set_reservoir_size(*options.reservoir_size);
        if (!options.min_fill &&
            sampler->min_fill() > *options.reservoir_size) {
          sampler->set_min_fill(*options.reservoir_size);
        }
      }
      if (options.min_fill) sampler->set_min_fill(*options.min_fill);
    }
    if (stage.has_tensor_generator()) {
      if (options.batch_size) {
        stage.mutable_tensor_generator()->set_batch_size(*options.batch_size);
      }
      if (options.input_format) {
        stage.mutable_tensor_generator()->set_input_format(
            *options.input_format);
      }
    }
  }
  if (options.rescore) InsertRescorer(*options.rescore, config);
  return config;
}

void InsertRescorer(const ChunkRescorerConfig& rescore,
                    DataLoaderConfig& config) {
  auto& stages = *config.mutable_stage();
  for (int i = 0; i < stages.size(); ++i) {
    if (!stages[i].has_chunk_unpacker()) continue;
    StageConfig rescorer;
    rescorer.set_name("rescorer");
    *rescorer.mutable_input() = stages[i].input();
    *rescorer.mutable_chunk_rescorer() = rescore;
    stages[i].clear_input();
    stages[i].add_input("rescorer");
    stages.Add(std::move(rescorer));
    // Move it from the end to just before the unpacker.
    for (int j = stages.size() - 1; j > i; --j) stages.SwapElements(j, j - 1);
    return;
  }
}

}  // namespace sluice::lc0
