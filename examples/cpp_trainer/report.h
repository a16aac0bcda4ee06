// The trainer's per-step report: a CSV file for plots
// (bindings/python/examples/plot_training.py) and a line on stdout every
// few steps.
//
//   Report report("run.csv", {"policy", "value", "moves_left"}, "positions",
//                 /*log_every=*/10, /*steps=*/200);
//   report.Step({.step = 1, .result = result, .wait_seconds = 0.001});
//   report.Eval(200, eval);
//
// CSV columns: step, loss, one per loss term (loss_<term>), accuracy (top-1
// of the training batch), data_wait_ms, step_ms, <unit>_per_s (rows over
// wait + step), and eval_loss, eval_accuracy (on steps that evaluated,
// empty otherwise). Losses are printed with 9 significant digits: two
// deterministic runs can be compared as text.
#ifndef CPP_TRAINER_REPORT_H_
#define CPP_TRAINER_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "evaluation.h"
#include "train_step.h"

namespace trainer {

// One training step, as reported.
struct StepReport {
  int64_t step = 0;
  StepResult result;
  double wait_seconds = 0;  // waiting for the batch
};

class Report {
 public:
  // `path` empty: stdout lines only. Throws std::runtime_error when the
  // file cannot be created.
  Report(const std::string& path, std::vector<std::string> term_names,
         std::string unit, int64_t log_every, int64_t steps);
  ~Report();

  void Step(const StepReport& step);
  // An evaluation after `step`: a CSV row of its own and a stdout line.
  void Eval(int64_t step, const EvalResult& eval);

 private:
  void Flush();

  std::FILE* file_ = nullptr;
  std::vector<std::string> term_names_;
  std::string unit_;
  int64_t log_every_;
  int64_t steps_;
};

}  // namespace trainer

#endif  // CPP_TRAINER_REPORT_H_
