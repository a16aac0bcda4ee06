// The sluice pipelines the trainer reads: the installed default training and
// eval configs of a workload (or the user's --pipeline files), pointed at
// the data and set up from the flags.
//
//   sluice::DataLoaderConfig config = TrainingPipeline(flags);
//   sluice::Loader loader(config);
#ifndef CPP_TRAINER_PIPELINE_CONFIG_H_
#define CPP_TRAINER_PIPELINE_CONFIG_H_

#include <string>

#include "flags.h"
#include "sluice/sluice.h"

namespace trainer {

// The training pipeline: --pipeline or the installed
// {lc0,audio}_train.textproto, reading --data, with the flags' batch size,
// shuffle buffer, loader threads and seed. Deterministic with
// --deterministic; resumable (checkpoints without deterministic mode) when
// a checkpoint is asked for. Throws FlagError when the file cannot be
// read or parsed.
sluice::DataLoaderConfig TrainingPipeline(const TrainerFlags& flags);

// The eval pipeline (one pass): --eval-pipeline or the installed
// {lc0,audio}_eval.textproto, reading --eval-data, with the flags' batch
// size and loader threads.
sluice::DataLoaderConfig EvalPipeline(const TrainerFlags& flags);

}  // namespace trainer

#endif  // CPP_TRAINER_PIPELINE_CONFIG_H_
