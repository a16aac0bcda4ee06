#include "stages/audio/dsp/real_fft.h"

#include <cmath>
#include <complex>
#include <numbers>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sluice::audio {
namespace {

// The one-sided DFT, naively in double.
std::vector<std::complex<double>> NaiveDft(const std::vector<float>& x) {
  const size_t n = x.size();
  std::vector<std::complex<double>> bins(n / 2 + 1);
  for (size_t k = 0; k < bins.size(); ++k) {
    for (size_t j = 0; j < n; ++j) {
      bins[k] += static_cast<double>(x[j]) *
                 std::polar(1.0, -2 * std::numbers::pi * double(j * k % n) / n);
    }
  }
  return bins;
}

std::vector<float> TestSignal(size_t n) {
  std::vector<float> x(n);
  for (size_t j = 0; j < n; ++j) {
    x[j] = static_cast<float>(std::sin(0.3 * j) + 0.25 * std::cos(1.7 * j) +
                              (j % 5 == 0 ? 0.5 : -0.1));
  }
  return x;
}

TEST(AudioRealFftTest, MatchesNaiveDft) {
  for (int n : {2, 7, 64, 400, 1024, 1000}) {
    absl::StatusOr<RealFft> fft = RealFft::Create(n);
    ASSERT_TRUE(fft.ok()) << fft.status();
    ASSERT_EQ(fft->size(), n);
    ASSERT_EQ(fft->input().size(), size_t(n));
    const std::vector<float> x = TestSignal(n);
    std::copy(x.begin(), x.end(), fft->input().begin());
    std::span<const std::complex<float>> bins = fft->Forward();
    const std::vector<std::complex<double>> expected = NaiveDft(x);
    ASSERT_EQ(bins.size(), expected.size());
    for (size_t k = 0; k < bins.size(); ++k) {
      EXPECT_NEAR(bins[k].real(), expected[k].real(), 1e-5 * n)
          << n << " " << k;
      EXPECT_NEAR(bins[k].imag(), expected[k].imag(), 1e-5 * n)
          << n << " " << k;
    }
    // The input is preserved, so a second call gives the same bins.
    EXPECT_EQ(std::vector<float>(fft->input().begin(), fft->input().end()), x);
    std::vector<std::complex<float>> first(bins.begin(), bins.end());
    bins = fft->Forward();
    EXPECT_EQ(std::vector<std::complex<float>>(bins.begin(), bins.end()),
              first);
  }
}

TEST(AudioRealFftTest, RejectsTooSmall) {
  for (int n : {-1, 0, 1}) {
    EXPECT_EQ(RealFft::Create(n).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

TEST(AudioRealFftTest, MovedObjectKeepsItsPlan) {
  absl::StatusOr<RealFft> created = RealFft::Create(8);
  ASSERT_TRUE(created.ok());
  RealFft fft = *std::move(created);
  std::ranges::fill(fft.input(), 1.0f);
  std::span<const std::complex<float>> bins = fft.Forward();
  EXPECT_FLOAT_EQ(bins[0].real(), 8.0f);
  EXPECT_FLOAT_EQ(std::abs(bins[1]), 0.0f);
}

// Planning is serialized internally: objects created and destroyed on
// several threads at once (ASan/TSan would flag a planner race).
TEST(AudioRealFftTest, ConcurrentCreation) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 50; ++i) {
        absl::StatusOr<RealFft> fft = RealFft::Create(64 + 2 * t + i % 3);
        ASSERT_TRUE(fft.ok());
        std::ranges::fill(fft->input(), 1.0f);
        EXPECT_FLOAT_EQ(fft->Forward()[0].real(), float(fft->size()));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace sluice::audio
