#include "pipeline_config.h"

#include <fstream>
#include <sstream>

#include "default_pipelines.h"
#include "google/protobuf/text_format.h"

namespace trainer {
namespace {

// The installed default pipeline of the workload for `mode` (train or eval;
// SLUICE_PIPELINES_DIR is the sluice package's sluice_PIPELINES_DIR).
std::string DefaultPipeline(const TrainerFlags& flags, const char* mode) {
  return std::string(SLUICE_PIPELINES_DIR) + "/" +
         WorkloadName(flags.workload) + "_" + mode + ".textproto";
}

sluice::DataLoaderConfig ReadPipeline(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw FlagError("cannot read the pipeline " + path);
  std::stringstream text;
  text << file.rdbuf();
  sluice::DataLoaderConfig config;
  if (!google::protobuf::TextFormat::ParseFromString(text.str(), &config)) {
    throw FlagError(path +
                    " is no text-format DataLoaderConfig (the parse "
                    "error is above)");
  }
  return config;
}

// Points file discovery at `directory` and sets the batch size and the
// loader's threads.
void Adapt(sluice::DataLoaderConfig& config, const std::string& directory,
           const TrainerFlags& flags) {
  config.set_worker_threads(flags.loader_threads);
  for (sluice::StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_file_path_provider()) {
      stage.mutable_file_path_provider()->clear_directory();
      stage.mutable_file_path_provider()->add_directory(directory);
    }
    if (stage.has_tensor_generator()) {
      stage.mutable_tensor_generator()->set_batch_size(flags.batch_size);
    }
    if (stage.has_batcher()) {
      stage.mutable_batcher()->set_batch_size(flags.batch_size);
    }
  }
}

// Sizes the training pipeline's reservoir: training starts once a quarter
// of the lc0 sampler's reservoir is in (as the default's 50000 of 200000),
// and at 80 % of the audio shuffle buffer (8000 of 10000).
void SetShuffleBuffer(sluice::DataLoaderConfig& config, int64_t size) {
  for (sluice::StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_shuffling_frame_sampler()) {
      stage.mutable_shuffling_frame_sampler()->set_reservoir_size(size);
      stage.mutable_shuffling_frame_sampler()->set_min_fill(size / 4);
    }
    if (stage.has_shuffle_buffer()) {
      stage.mutable_shuffle_buffer()->set_size(size);
      stage.mutable_shuffle_buffer()->set_min_fill(size * 8 / 10);
    }
  }
}

}  // namespace

sluice::DataLoaderConfig TrainingPipeline(const TrainerFlags& flags) {
  sluice::DataLoaderConfig config =
      ReadPipeline(flags.pipeline.empty() ? DefaultPipeline(flags, "train")
                                          : flags.pipeline);
  Adapt(config, flags.data, flags);
  if (flags.shuffle_buffer > 0) SetShuffleBuffer(config, flags.shuffle_buffer);
  config.set_seed(flags.seed);
  if (flags.deterministic) config.set_deterministic(true);
  if (!flags.checkpoint.empty() || !flags.resume.empty()) {
    config.set_resumable(true);
  }
  return config;
}

sluice::DataLoaderConfig EvalPipeline(const TrainerFlags& flags) {
  sluice::DataLoaderConfig config =
      ReadPipeline(flags.eval_pipeline.empty() ? DefaultPipeline(flags, "eval")
                                               : flags.eval_pipeline);
  Adapt(config, flags.eval_data, flags);
  return config;
}

}  // namespace trainer
