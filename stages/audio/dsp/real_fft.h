// RealFft: the forward FFT of n real samples (FFTW single precision, planned
// once). Unnormalized, like torch.fft.rfft and torch.stft(normalized=False):
// X[k] = sum_j x[j] * exp(-2*pi*i*j*k/n) for k in [0, n/2].
//
//   SLUICE_ASSIGN_OR_RETURN(RealFft fft, RealFft::Create(400));
//   std::ranges::copy(frame, fft.input().begin());
//   std::span<const std::complex<float>> bins = fft.Forward();  // 201 bins
//
// Threading: creating and destroying plans is serialized by a process-wide
// mutex (FFTW's planner is not thread-safe); Forward() on different objects
// may run in parallel, but one object must not be used by two threads at
// once (its buffers are shared by the calls).
#ifndef SLUICE_STAGES_AUDIO_DSP_REAL_FFT_H_
#define SLUICE_STAGES_AUDIO_DSP_REAL_FFT_H_

#include <complex>
#include <memory>
#include <span>

#include "absl/status/statusor.h"

namespace sluice::audio {

class RealFft {
 public:
  // InvalidArgument unless n >= 2. Plans with FFTW_ESTIMATE: quick, and
  // the same plan (hence the same bits) on every run.
  static absl::StatusOr<RealFft> Create(int n);

  RealFft(RealFft&&) noexcept;
  RealFft& operator=(RealFft&&) noexcept;
  ~RealFft();

  // The transform length n.
  int size() const;

  // The n input samples (SIMD-aligned). Forward() leaves them unchanged.
  std::span<float> input();

  // Transforms input() and returns its n/2 + 1 bins, valid until the next
  // Forward(). Allocates nothing.
  std::span<const std::complex<float>> Forward();

 private:
  struct Plan;
  explicit RealFft(std::unique_ptr<Plan> plan);

  std::unique_ptr<Plan> plan_;
};

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_DSP_REAL_FFT_H_
