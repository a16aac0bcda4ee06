// The training loop: batches from the feed, one optimizer step each, the
// report, periodic evaluation and checkpoints, and a clean stop.
//
//   TrainingRun run{flags, *workload, *optimizer, loader, feed, report};
//   LoopOutcome outcome = RunTraining(run, /*first_step=*/1);
#ifndef CPP_TRAINER_TRAINING_LOOP_H_
#define CPP_TRAINER_TRAINING_LOOP_H_

#include <cstdint>

#include "batch_feed.h"
#include "flags.h"
#include "report.h"
#include "sluice/sluice.h"
#include "torch/torch.h"
#include "workload.h"

namespace trainer {

// The pieces of one training run (all owned by the caller).
struct TrainingRun {
  const TrainerFlags& flags;
  Workload& workload;
  torch::optim::Optimizer& optimizer;
  sluice::Loader& loader;  // started; its batches come through `feed`
  BatchFeed& feed;
  Report& report;
};

// How the loop ended.
struct LoopOutcome {
  int64_t last_step = 0;    // the last step taken (first_step - 1: none)
  bool stopped = false;     // Ctrl-C or SIGTERM
  bool data_ended = false;  // the training pipeline ended before --steps
  int64_t rows = 0;         // positions or clips trained on in this run
  double seconds = 0;       // wall time of the loop
  double wait_seconds = 0;  // of which waiting for batches
};

// Steps `first_step` to flags.steps. Each step takes the next batch and
// keeps it in scope until its optimizer step is done (the model reads the
// batch's buffer in place). Evaluates every --eval-every steps; writes the
// checkpoint every --checkpoint-every steps and when the loop ends, also on
// a stop, which is seen within BatchFeed::kStopPollInterval of the current
// step's end. Throws what the loader throws and CheckpointError.
LoopOutcome RunTraining(TrainingRun& run, int64_t first_step);

// Writes the checkpoint after `step` to flags.checkpoint: the model, the
// optimizer and the loader's state (taken now, between two batches).
void WriteCheckpoint(TrainingRun& run, int64_t step);

}  // namespace trainer

#endif  // CPP_TRAINER_TRAINING_LOOP_H_
