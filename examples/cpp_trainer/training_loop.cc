#include "training_loop.h"

#include <chrono>
#include <cstdio>

#include "checkpoint.h"
#include "evaluation.h"
#include "pipeline_config.h"
#include "stop_signal.h"
#include "train_step.h"

namespace trainer {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

void WriteCheckpoint(TrainingRun& run, int64_t step) {
  const Clock::time_point start = Clock::now();
  SaveCheckpoint(run.flags.checkpoint,
                 {.step = step,
                  .loader = run.loader.Checkpoint(),
                  .settings = run.workload.settings()},
                 run.workload.model(), run.optimizer);
  std::printf("checkpoint after step %lld: %s (%.0f ms)\n",
              static_cast<long long>(step), run.flags.checkpoint.c_str(),
              1e3 * SecondsSince(start));
  std::fflush(stdout);
}

LoopOutcome RunTraining(TrainingRun& run, int64_t first_step) {
  const TrainerFlags& flags = run.flags;
  LoopOutcome outcome{.last_step = first_step - 1};
  const Clock::time_point start = Clock::now();
  for (int64_t step = first_step; step <= flags.steps; ++step) {
    // The batch lives in this scope: the model reads its buffer in place
    // through the forward pass, the backward pass and the update.
    std::optional<sluice::Batch> batch = run.feed.Next();
    outcome.wait_seconds += run.feed.last_wait_seconds();
    if (!batch.has_value()) {
      outcome.stopped = StopSignal::requested();
      outcome.data_ended = !outcome.stopped;
      break;
    }
    StepResult result = TrainStep(run.workload, run.optimizer, *batch);
    batch.reset();  // the step is done: the buffer may go back to sluice
    outcome.last_step = step;
    outcome.rows += result.rows;
    run.report.Step({.step = step,
                     .result = std::move(result),
                     .wait_seconds = run.feed.last_wait_seconds()});
    if (flags.eval_every > 0 && step % flags.eval_every == 0 &&
        step != flags.steps) {
      run.report.Eval(step, Evaluate(run.workload, EvalPipeline(flags)));
    }
    if (StopSignal::requested()) {
      outcome.stopped = true;
      break;
    }
    if (flags.checkpoint_every > 0 && step % flags.checkpoint_every == 0 &&
        step != flags.steps) {
      WriteCheckpoint(run, step);
    }
  }
  outcome.seconds = SecondsSince(start);
  if (!flags.checkpoint.empty() && outcome.last_step >= first_step) {
    WriteCheckpoint(run, outcome.last_step);
  }
  return outcome;
}

}  // namespace trainer
