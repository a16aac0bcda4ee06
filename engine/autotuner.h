// Autotuner: the decisions of DataLoaderConfig.autotune, apart from the
// pipeline that measures and applies them (engine/pipeline_autotune.cc), so
// that they can be tested on synthetic loads.
//
//   Autotuner tuner(settings, {});
//   every tick (a fixed period; the pipeline uses kAutotuneTick):
//     for (const Autotuner::Change& change : tuner.Tick(sample)) apply it;
//
// How it decides (a hill climb, one trial at a time):
// - It measures the pipeline's rate over `measure_ticks` ticks after
//   `warmup_ticks`: the baseline. The rate is the items all channels pass
//   per second, which in steady state is proportional to the output's rate
//   whatever the batch size (a batch every few seconds would measure
//   nothing in a quarter second; the items that make it up do). The
//   pressures it then decides on are the means of the measured ticks'
//   (one tick's flap around 1 would decide by chance).
// - It then raises every setting under pressure together, as one trial
//   (from a bad config this gets most of the way at once; settings that
//   hold each other back, e.g. a stage's workers and the one-item channels
//   around it, gain nothing one at a time), kept or undone as any trial.
// - Then, one trial at a time, it raises the setting with the highest
//   pressure (the pipeline's measure of "more would help": a stage whose
//   active workers are busy, a channel whose senders and receivers both
//   keep suspending), among those below their max, not rejected and
//   fitting the memory headroom: parallelism by one, even with every core
//   busy (a worker is a coroutine, not a thread: another one may still
//   overlap the hand-offs, and the trial tells); or, when that setting is
//   a capacity, every capacity under pressure four times, and at least to
//   16 items (64 or 256 when that many fit in 4 MiB), at once (small
//   channels in a row each hold the others back: one alone may gain
//   nothing). Such a group is one trial.
// - After the same warm-up and measurement, it keeps the raise when the
//   rate grew by at least `min_gain` and by more than the noise (twice the
//   standard error of the difference of the two means, from the spread of
//   the ticks' rates: a co-runner taking the cores at random makes
//   growth by chance likely): the new baseline, from which it starts again
//   with a joint trial. Otherwise it puts the settings back; a setting
//   raised alone is rejected until some other raise is kept.
// - When every trial of the round was rejected, it measures a fresh
//   baseline and runs a second round of trials (joint, then alone) from
//   the pressures measured there: a co-runner may have made the baseline
//   lucky or the trials unlucky. A kept raise starts the rounds again.
// - With no candidate after that it is settled and changes nothing; should
//   a setting that was not rejected come under pressure later (the load
//   moved), it measures a new baseline and tries it, in one round, keeping
//   a raise only on twice the gain and twice the margin over the noise
//   (over a long run chance blips start many such trials).
//
// Promises: a setting never goes below its configured value, nor above its
// max, nor the memory headroom; it only goes back down to undo its own
// rejected trial. Every kept raise moves a bounded setting up, and between
// two kept raises each setting is tried at most twice alone and twice with
// the others, so the number of trials is bounded whatever the noise: the
// tuner settles for good after a bounded number of changes, no
// oscillation.
// Ticks in which nothing moved (a paused consumer) are not measured: they
// restart the current measurement.
#ifndef SLUICE_ENGINE_AUTOTUNER_H_
#define SLUICE_ENGINE_AUTOTUNER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "proto/data_loader_metrics.pb.h"

namespace sluice {

// The period on which the pipeline measures and feeds the tuner.
inline constexpr std::chrono::milliseconds kAutotuneTick{250};

// One setting the tuner may raise.
struct TunedSetting {
  std::string stage;
  // "parallelism", or "output 'NAME' capacity".
  std::string setting;
  bool is_parallelism = false;
  uint64_t configured = 1;
  uint64_t value = 1;  // the current choice
  uint64_t max = 1;
  // Modelled memory of one unit (engine/memory_model.h); 0 when unknown.
  uint64_t bytes_each = 0;
};

// What the pipeline measured over one tick.
struct AutotuneSample {
  double seconds = 0;
  // Items every channel of the pipeline passed on during the tick, summed.
  uint64_t progress = 0;
  // Per setting, in the tuner's order: at least 1 when a raise may help.
  std::vector<double> pressure;
};

class Autotuner {
 public:
  struct Options {
    int warmup_ticks = 1;
    int measure_ticks = 3;
    // The least rate growth that keeps a raise (0.05: 5 %); more when the
    // ticks' rates are noisy (see the file comment).
    double min_gain = 0.05;
    // Modelled bytes the tuner may add (the memory budget's headroom).
    uint64_t headroom_bytes = std::numeric_limits<uint64_t>::max();
  };

  // A setting to apply: settings()[index] is now `value`.
  struct Change {
    size_t index;
    uint64_t value;
  };

  Autotuner(std::vector<TunedSetting> settings, Options options);

  // Takes one tick's measurements (pressure sized like settings(), or
  // empty) and returns the settings to change now.
  std::vector<Change> Tick(const AutotuneSample& sample);

  const std::vector<TunedSetting>& settings() const { return settings_; }
  // True while no trial is under way and no setting is under pressure.
  bool settled() const { return phase_ == Phase::kSettled; }
  // The settings, trials, kept raises, settled flag and kept rate.
  AutotuneMetricsProto Metrics() const;

 private:
  enum class Phase { kBaseline, kTrial, kSettled };

  // The setting a trial would raise now: the one under the most pressure
  // (at least 1) that may be raised; settings_.size() when none.
  size_t BestCandidate(const AutotuneSample& sample) const;
  bool HasCandidate(const AutotuneSample& sample) const;
  // Starts the next trial, or settles; returns the change it makes.
  std::vector<Change> StartTrial(const AutotuneSample& sample);
  // The settings under pressure that may be raised, rejected or not.
  std::vector<size_t> UnderPressure(const AutotuneSample& sample) const;
  // Raises `indices` (as far as the memory allows) as one trial.
  std::vector<Change> Raise(const std::vector<size_t>& indices);
  // The value a raise of setting `index` moves to, within max and memory.
  uint64_t RaisedValue(size_t index) const;

  std::vector<TunedSetting> settings_;
  const Options options_;
  Phase phase_ = Phase::kBaseline;
  // A measurement: the mean of its ticks' rates, and the variance of that
  // mean (from the ticks' spread).
  struct Measurement {
    double rate = 0;
    double variance_of_mean = 0;
  };
  static Measurement Measure(const std::vector<double>& rates);

  // Starts round `round` of trials: nothing rejected, the joint trial to
  // come.
  void StartRound(int round);
  // Starts the current measurement again.
  void RestartMeasurement();
  // Adds a measured tick's pressures to the measurement's.
  void AddToMean(const AutotuneSample& sample);
  // The measured ticks' mean pressures.
  AutotuneSample MeanSample() const;

  // The current measurement: ticks seen, the rates measured, and the sums
  // of their pressures.
  int ticks_ = 0;
  std::vector<double> rates_;
  std::vector<double> pressure_sum_;
  Measurement baseline_;
  // The trial under way: the settings raised and the values to go back to.
  std::vector<std::pair<size_t, uint64_t>> trial_;
  std::vector<bool> rejected_;
  // The round of trials since the last kept raise (1 or 2).
  int round_ = 1;
  // Trials since it first settled keep a raise only on a larger gain.
  bool strict_ = false;
  // Since the last kept raise, the settings under pressure were raised
  // together; and whether the trial under way is that joint one.
  bool tried_together_ = false;
  bool trial_together_ = false;
  // The settings that joint trial raised, in order (empty before it).
  std::vector<size_t> joint_trial_;
  uint64_t headroom_bytes_;
  uint64_t trials_ = 0;
  uint64_t adjustments_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_AUTOTUNER_H_
