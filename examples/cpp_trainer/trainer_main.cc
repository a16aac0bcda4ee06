#include "trainer_main.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "batch_feed.h"
#include "checkpoint.h"
#include "evaluation.h"
#include "flags.h"
#include "pipeline_config.h"
#include "report.h"
#include "sluice/sluice.h"
#include "stop_signal.h"
#include "torch/torch.h"
#include "train_step.h"
#include "training_loop.h"
#include "workload.h"

namespace trainer {
namespace {

// Torch's threads: --torch-threads, or the cores the loader leaves.
void SetUpTorch(const TrainerFlags& flags) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  const int loader = flags.loader_threads == 0 ? cores : flags.loader_threads;
  const int threads = flags.torch_threads > 0 ? flags.torch_threads
                                              : std::max(1, cores - loader);
  torch::set_num_threads(threads);
  torch::manual_seed(flags.seed);
  if (flags.deterministic) {
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/true);
  }
  std::printf("torch threads %d, loader threads %d\n", threads, loader);
}

// The audio model's classes: the checkpoint's, --classes, or 1 + the
// largest label of the first batch (peeked, not taken).
int64_t Classes(const TrainerFlags& flags,
                const std::optional<TrainerCheckpoint>& resumed,
                BatchFeed& feed) {
  if (flags.workload != WorkloadKind::kAudio) return 0;
  if (flags.classes > 0) return flags.classes;
  if (resumed.has_value()) {
    const std::string& settings = resumed->state().settings;
    const size_t at = settings.find("classes=");
    if (at != std::string::npos) return std::stoll(settings.substr(at + 8));
  }
  const sluice::Batch* first = feed.Peek();
  if (first == nullptr) return 0;
  const sluice::Tensor& label = first->tensor("label");
  const int64_t* labels = label.data_as<int64_t>();
  return 1 + *std::max_element(labels, labels + first->size());
}

int Train(const TrainerFlags& flags) {
  SetUpTorch(flags);
  sluice::Loader loader(TrainingPipeline(flags));
  std::optional<TrainerCheckpoint> resumed;
  if (!flags.resume.empty()) {
    resumed = TrainerCheckpoint::Read(flags.resume);
    loader.ResumeFrom(resumed->state().loader);
  }
  loader.Start();
  BatchFeed feed(loader);
  const int64_t classes = Classes(flags, resumed, feed);
  if (StopSignal::requested()) return 0;
  if (flags.workload == WorkloadKind::kAudio && classes == 0) {
    std::fprintf(stderr, "cpp_trainer: no training data in %s\n",
                 flags.data.c_str());
    return 1;
  }
  std::unique_ptr<Workload> workload = MakeWorkload(flags, classes);
  std::unique_ptr<torch::optim::Optimizer> optimizer =
      MakeOptimizer(flags, workload->model());
  int64_t first_step = 1;
  if (resumed.has_value()) {
    resumed->Restore(workload->settings(), workload->model(), *optimizer);
    SetLearningRate(*optimizer, flags.learning_rate);
    first_step = resumed->state().step + 1;
    std::printf("resumed from %s after step %lld\n", flags.resume.c_str(),
                static_cast<long long>(first_step - 1));
  }
  std::printf("model: %s\n", workload->settings().c_str());
  Report report(flags.report, workload->term_names(), workload->unit(),
                flags.log_every, flags.steps);
  TrainingRun run{flags, *workload, *optimizer, loader, feed, report};
  const LoopOutcome outcome = RunTraining(run, first_step);
  loader.Stop();

  const double rate = outcome.seconds > 0 ? outcome.rows / outcome.seconds : 0;
  std::printf(
      "trained steps %lld..%lld: %lld %s in %.1f s (%.0f %s/s), waiting for "
      "data %.1f %% of the time\n",
      static_cast<long long>(first_step),
      static_cast<long long>(outcome.last_step),
      static_cast<long long>(outcome.rows), workload->unit(), outcome.seconds,
      rate, workload->unit(),
      outcome.seconds > 0 ? 100 * outcome.wait_seconds / outcome.seconds : 0);
  if (outcome.stopped) {
    std::printf("stopped after step %lld%s\n",
                static_cast<long long>(outcome.last_step),
                flags.checkpoint.empty() ? "" : "; checkpoint written");
    return 0;
  }
  if (outcome.data_ended) {
    std::printf("the training data ended after step %lld\n",
                static_cast<long long>(outcome.last_step));
  }
  if (!flags.eval_data.empty()) {
    report.Eval(outcome.last_step, Evaluate(*workload, EvalPipeline(flags)));
  }
  return 0;
}

}  // namespace

int RunCppTrainer(int argc, char** argv) {
  TrainerFlags flags;
  try {
    flags = ParseFlags(argc, argv);
  } catch (const FlagError& error) {
    std::fprintf(stderr, "cpp_trainer: %s\n", error.what());
    return 2;
  }
  if (flags.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  StopSignal::Install();
  try {
    return Train(flags);
  } catch (const FlagError& error) {
    std::fprintf(stderr, "cpp_trainer: %s\n", error.what());
    return 2;
  } catch (const sluice::ConfigError& error) {
    std::fprintf(stderr, "cpp_trainer: bad pipeline: %s\n", error.what());
    return 2;
  } catch (const CheckpointError& error) {
    std::fprintf(stderr, "cpp_trainer: %s\n", error.what());
    return 2;
  } catch (const sluice::PipelineError& error) {
    std::fprintf(stderr, "cpp_trainer: pipeline failed: %s\n", error.what());
    return 1;
  } catch (const c10::Error& error) {
    std::fprintf(stderr, "cpp_trainer: torch: %s\n",
                 error.what_without_backtrace());
    return 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cpp_trainer: %s\n", error.what());
    return 1;
  }
}

}  // namespace trainer
