// What the parts of the audio pipeline benchmark share
// (audio_pipeline_benchmark.cc): its clock and constants, its options, and
// how it stops on an error.
#ifndef SLUICE_BENCH_AUDIO_BENCH_COMMON_H_
#define SLUICE_BENCH_AUDIO_BENCH_COMMON_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sluice::audio_bench {

using Clock = std::chrono::steady_clock;
inline constexpr int kSampleRate = 16000;
inline constexpr size_t kClipSamples = 16000;  // eval centre crop, 1 s
inline constexpr int kBatchSize = 256;

// `d` in seconds.
inline double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Prints `message` to stderr and exits with status 1.
[[noreturn]] inline void Die(const std::string& message) {
  std::fprintf(stderr, "audio_pipeline_benchmark: %s\n", message.c_str());
  std::exit(1);
}

// The command line (audio_pipeline_benchmark.cc).
struct Options {
  int64_t clips = 2000;
  int rounds = 3;
  std::vector<int> threads = {1, 2};
  bool peer = true;
  int train_batches = 40;
  std::string dir;
};

}  // namespace sluice::audio_bench

#endif  // SLUICE_BENCH_AUDIO_BENCH_COMMON_H_
