#include "stages/audio/dsp/real_fft.h"

#include <fftw3.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::audio {
namespace {

// FFTW's planner (plan creation and destruction) is not thread-safe.
std::mutex& PlannerMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

struct RealFft::Plan {
  explicit Plan(int n)
      : n(n),
        input(fftwf_alloc_real(n)),
        output(fftwf_alloc_complex(n / 2 + 1)) {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    plan = fftwf_plan_dft_r2c_1d(n, input, output,
                                 FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
  }
  ~Plan() {
    {
      std::lock_guard<std::mutex> lock(PlannerMutex());
      fftwf_destroy_plan(plan);
    }
    fftwf_free(output);
    fftwf_free(input);
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  int n;
  float* input;
  fftwf_complex* output;
  fftwf_plan plan = nullptr;
};

absl::StatusOr<RealFft> RealFft::Create(int n) {
  if (n < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("real FFT: size must be at least 2, got ", n));
  }
  auto plan = std::make_unique<Plan>(n);
  if (plan->plan == nullptr) {
    return absl::InternalError(
        absl::StrCat("real FFT: FFTW could not plan size ", n));
  }
  std::fill(plan->input, plan->input + n, 0.0f);
  return RealFft(std::move(plan));
}

RealFft::RealFft(std::unique_ptr<Plan> plan) : plan_(std::move(plan)) {}
RealFft::RealFft(RealFft&&) noexcept = default;
RealFft& RealFft::operator=(RealFft&&) noexcept = default;
RealFft::~RealFft() = default;

int RealFft::size() const { return plan_->n; }

std::span<float> RealFft::input() { return {plan_->input, size_t(plan_->n)}; }

std::span<const std::complex<float>> RealFft::Forward() {
  fftwf_execute(plan_->plan);
  // fftwf_complex is float[2], layout-compatible with std::complex<float>.
  return {reinterpret_cast<const std::complex<float>*>(plan_->output),
          size_t(plan_->n / 2 + 1)};
}

}  // namespace sluice::audio
