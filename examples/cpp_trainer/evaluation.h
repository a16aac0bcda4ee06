// One evaluation pass: the model, in eval mode and without gradients, over
// every batch of a finite (eval) pipeline.
//
//   EvalResult eval = Evaluate(*workload, EvalPipeline(flags));
//   std::printf("%.1f %%\n", 100 * eval.accuracy());
#ifndef CPP_TRAINER_EVALUATION_H_
#define CPP_TRAINER_EVALUATION_H_

#include <cstdint>
#include <vector>

#include "sluice/sluice.h"
#include "workload.h"

namespace trainer {

// Means over every row of the pass.
struct EvalResult {
  int64_t rows = 0;
  double loss = 0;
  std::vector<double> terms;  // Workload::term_names()
  int64_t correct = 0;
  bool stopped = false;  // a stop was requested: the pass is incomplete

  double accuracy() const {
    return rows > 0 ? static_cast<double>(correct) / rows : 0.0;
  }
};

// Runs a loader on `config` to its end and evaluates every batch; returns
// early (stopped) on a stop request. The model is back in train mode after.
// Throws what the loader throws (sluice::ConfigError, PipelineError).
EvalResult Evaluate(Workload& workload, const sluice::DataLoaderConfig& config);

}  // namespace trainer

#endif  // CPP_TRAINER_EVALUATION_H_
