#include "report.h"

#include <stdexcept>
#include <utility>

namespace trainer {

Report::Report(const std::string& path, std::vector<std::string> term_names,
               std::string unit, int64_t log_every, int64_t steps)
    : term_names_(std::move(term_names)),
      unit_(std::move(unit)),
      log_every_(log_every),
      steps_(steps) {
  if (path.empty()) return;
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) {
    throw std::runtime_error("cannot create the report " + path);
  }
  std::fprintf(file_, "step,loss");
  for (const std::string& term : term_names_) {
    std::fprintf(file_, ",loss_%s", term.c_str());
  }
  std::fprintf(file_,
               ",accuracy,data_wait_ms,step_ms,%s_per_s,eval_loss,"
               "eval_accuracy\n",
               unit_.c_str());
  Flush();
}

Report::~Report() {
  if (file_ != nullptr) std::fclose(file_);
}

void Report::Flush() {
  if (file_ != nullptr) std::fflush(file_);
}

void Report::Step(const StepReport& step) {
  const StepResult& result = step.result;
  const double accuracy =
      result.rows > 0 ? static_cast<double>(result.correct) / result.rows : 0;
  const double seconds = step.wait_seconds + result.seconds;
  const double rate = seconds > 0 ? result.rows / seconds : 0;
  if (file_ != nullptr) {
    std::fprintf(file_, "%lld,%.9g", static_cast<long long>(step.step),
                 result.loss);
    for (double term : result.terms) std::fprintf(file_, ",%.9g", term);
    std::fprintf(file_, ",%.6f,%.3f,%.3f,%.1f,,\n", accuracy,
                 1e3 * step.wait_seconds, 1e3 * result.seconds, rate);
    Flush();
  }
  if (step.step % log_every_ != 0 && step.step != steps_ && step.step != 1) {
    return;
  }
  std::printf("step %lld/%lld  loss %.4f", static_cast<long long>(step.step),
              static_cast<long long>(steps_), result.loss);
  if (!result.terms.empty()) {
    std::printf(" (");
    for (size_t i = 0; i < result.terms.size(); ++i) {
      std::printf("%s%s %.4f", i ? " " : "", term_names_[i].c_str(),
                  result.terms[i]);
    }
    std::printf(")");
  }
  std::printf(
      "  accuracy %.1f %%  data wait %.1f ms  step %.0f ms  %.0f %s/s\n",
      100 * accuracy, 1e3 * step.wait_seconds, 1e3 * result.seconds, rate,
      unit_.c_str());
  std::fflush(stdout);
}

void Report::Eval(int64_t step, const EvalResult& eval) {
  if (file_ != nullptr) {
    std::fprintf(file_, "%lld,", static_cast<long long>(step));
    for (size_t i = 0; i < term_names_.size(); ++i) std::fputc(',', file_);
    std::fprintf(file_, ",,,,,%.9g,%.6f\n", eval.loss, eval.accuracy());
    Flush();
  }
  std::printf("eval after step %lld: %lld %s, loss %.4f",
              static_cast<long long>(step), static_cast<long long>(eval.rows),
              unit_.c_str(), eval.loss);
  for (size_t i = 0; i < eval.terms.size(); ++i) {
    std::printf("%s%s %.4f", i ? " " : " (", term_names_[i].c_str(),
                eval.terms[i]);
  }
  if (!eval.terms.empty()) std::printf(")");
  std::printf(", accuracy %.2f %% (%lld of %lld)%s\n", 100 * eval.accuracy(),
              static_cast<long long>(eval.correct),
              static_cast<long long>(eval.rows),
              eval.stopped ? " [stopped early]" : "");
  std::fflush(stdout);
}

}  // namespace trainer
