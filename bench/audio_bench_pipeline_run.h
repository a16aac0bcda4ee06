// One run of the audio eval or train pipeline in a forked child (its own
// peak RSS), what it measured, and the memory the run's config and sampled
// occupancy account for.
#ifndef SLUICE_BENCH_AUDIO_BENCH_PIPELINE_RUN_H_
#define SLUICE_BENCH_AUDIO_BENCH_PIPELINE_RUN_H_

#include <map>
#include <string>

#include "bench/audio_bench_data.h"

namespace sluice::audio_bench {

// What one pipeline run measured, as "key value" lines across the fork.
struct RunResult {
  std::string error;  // set: the run failed
  double seconds = 0;
  double first_batch_seconds = 0;
  double clips = 0;  // delivered (eval: all; train: after the first batch)
  double skipped = 0;
  double cpu_busy = 0;      // process CPU over wall x threads
  double base_rss_mib = 0;  // the child's RSS when it started
  double peak_rss_mib = 0;  // VmHWM at the end
  // Bytes malloc handed out and not yet freed (mallinfo2 uordblks +
  // hblkhd), at the start and at their sampled peak.
  double base_malloc_mib = 0;
  double peak_malloc_mib = 0;
  // Inputs of the memory estimate (peaks sampled after every batch).
  double max_shuffle_fill = 0;
  double shuffle_size = 0;
  double max_batch_buffer_bytes = 0;
  double readahead = 0;
  double decoder_parallelism = 0;
  std::map<std::string, double> capacity;   // output channel per stage
  std::map<std::string, double> max_queue;  // sampled peak size, per stage
  std::map<std::string, double> load;       // per stage, since start
};

// Runs the eval pipeline (until the end of the stream) or the train one
// (its first batch, then `train_batches` more) over the clips in `dir` with
// `threads` worker threads, in a forked child: its peak RSS is its own, and
// no run inherits another's freed memory. An eval run that delivers other
// than `expected_clips` clips sets RunResult::error.
RunResult RunPipeline(const std::string& dir, int threads, bool train,
                      int train_batches, int64_t expected_clips);

// What the run held, in MiB, from the config and the run's sampled
// occupancy (peaks sampled every 5 ms): the reservoir's peak fill x one
// spectrogram example, the batcher's batch buffers (its peak
// batch_buffer_bytes gauge), each output channel's peak size x that
// stage's example bytes (decoder: a mean waveform at 16 kHz; crop: 1 s;
// spectrogram and shuffle: a spectrogram), the decoders' per-coroutine
// buffers (their largest clip: 3 s of 48 kHz stereo, interleaved and mixed,
// and its 16 kHz resampling), and arrow_source's record batches: readahead
// being read or queued, plus those the examples in its output channel
// ("clips", waiting for the decoder) hold views into: peak size / rows per
// record batch, rounded up, + 1 (at most every batch of the pass). The
// bound: the same with every channel full at its capacity, the reservoir at
// its size, and (capacity + 2) batches. Not counted: Example and channel
// bookkeeping, thread stacks, FFT plans, malloc's own overhead and
// retention.
struct Estimate {
  double occupancy_mib = 0;
  double bound_mib = 0;
  std::string how;
};

// The estimate and the bound of what run `r` over `clips` held.
Estimate EstimateMemory(const RunResult& r, const Clips& clips,
                        double mean_clip_seconds);

}  // namespace sluice::audio_bench

#endif  // SLUICE_BENCH_AUDIO_BENCH_PIPELINE_RUN_H_
