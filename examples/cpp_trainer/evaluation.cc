#include "evaluation.h"

#include "batch_feed.h"
#include "stop_signal.h"

namespace trainer {

EvalResult Evaluate(Workload& workload,
                    const sluice::DataLoaderConfig& config) {
  sluice::Loader loader(config);
  loader.Start();
  BatchFeed feed(loader);
  EvalResult result;
  result.terms.assign(workload.term_names().size(), 0.0);
  torch::NoGradGuard no_grad;
  workload.model().eval();
  while (std::optional<sluice::Batch> batch = feed.Next()) {
    const BatchLoss loss = workload.Loss(*batch);
    const auto rows = static_cast<double>(batch->size());
    result.loss += loss.loss.item<double>() * rows;
    for (size_t i = 0; i < loss.terms.size(); ++i) {
      result.terms[i] += loss.terms[i] * rows;
    }
    result.correct += loss.correct;
    result.rows += batch->size();
  }
  workload.model().train();
  loader.Stop();
  result.stopped = StopSignal::requested();
  if (result.rows > 0) {
    result.loss /= result.rows;
    for (double& term : result.terms) term /= result.rows;
  }
  return result;
}

}  // namespace trainer
