// The audio benchmark's ceiling: the pipeline's per-clip work (decode,
// resample, centre crop, log-mel spectrogram) in a plain loop, no engine.
#ifndef SLUICE_BENCH_AUDIO_BENCH_CEILING_H_
#define SLUICE_BENCH_AUDIO_BENCH_CEILING_H_

#include "bench/audio_bench_data.h"

namespace sluice::audio_bench {

// One pass of the plain loop over every clip.
struct CeilingPass {
  double seconds = 0;
  double audio_seconds = 0;  // of the clips as encoded
};

// One core: decode + resample + centre crop + log-mel spectrogram of every
// clip, the pipeline's parameters, no engine.
CeilingPass CeilingOnce(const Clips& clips);

// `threads` copies of CeilingOnce at once: all their clips over the slowest
// one's time, in clips/s.
double ParallelCeiling(const Clips& clips, int threads);

}  // namespace sluice::audio_bench

#endif  // SLUICE_BENCH_AUDIO_BENCH_CEILING_H_
