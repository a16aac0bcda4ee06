#include "engine/autotuner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

// A synthetic pipeline: one stage whose throughput grows with its workers
// up to `best_workers` (then flat: the cores are full), behind a channel
// that costs throughput while smaller than `best_capacity`. Its pressures
// are what the pipeline would measure: the stage's workers are busy while
// it is the bottleneck, the channel flaps while it is too small. `noise`
// scales each tick's delivered items by a uniform factor in [1 - noise,
// 1 + noise] (a co-runner taking the cores at random).
class SyntheticPipeline {
 public:
  SyntheticPipeline(uint64_t best_workers, uint64_t best_capacity, double noise,
                    uint64_t seed)
      : best_workers_(best_workers),
        best_capacity_(best_capacity),
        noise_(noise),
        random_(seed) {}

  // Settings: 0 = the stage's parallelism, 1 = the channel's capacity.
  static std::vector<TunedSetting> Settings(uint64_t workers,
                                            uint64_t capacity) {
    return {{.stage = "decode",
             .setting = "parallelism",
             .is_parallelism = true,
             .configured = workers,
             .value = workers,
             .max = 8,
             .bytes_each = 1000},
            {.stage = "decode",
             .setting = "output 'output' capacity",
             .configured = capacity,
             .value = capacity,
             .max = 4096,
             .bytes_each = 10}};
  }

  double Rate(uint64_t workers, uint64_t capacity) const {
    const double parallel = std::min(workers, best_workers_);
    // Half the rate at capacity 1, all of it from best_capacity on.
    const double channel = capacity >= best_capacity_
                               ? 1.0
                               : 0.5 + 0.5 * std::log2(capacity + 1.0) /
                                           std::log2(best_capacity_ + 1.0);
    return 1000 * parallel * channel;
  }

  AutotuneSample Measure(const std::vector<TunedSetting>& settings) {
    const uint64_t workers = settings[0].value;
    const uint64_t capacity = settings[1].value;
    std::uniform_real_distribution<double> factor(1 - noise_, 1 + noise_);
    AutotuneSample sample;
    sample.seconds = 0.25;
    sample.progress = static_cast<uint64_t>(Rate(workers, capacity) *
                                            sample.seconds * factor(random_));
    sample.pressure = {
        workers < best_workers_ ? 1.3 * factor(random_) : 0.9 * factor(random_),
        capacity < best_capacity_ ? 4.0 : 0.2};
    return sample;
  }

 private:
  const uint64_t best_workers_;
  const uint64_t best_capacity_;
  const double noise_;
  std::mt19937_64 random_;
};

// The most trials: between kept raises (7 worker steps, 5 capacity steps:
// 1, 16, 64, 256, 1024, 4096), and after the last, two rounds each of a
// joint trial and each of the 2 settings alone; 4 ticks each, and a
// baseline of 4 ticks per round.
constexpr int kMaxTrials = (7 + 5 + 1) * 2 * 3;
constexpr int kSettleTicks = (7 + 5 + 1) * 2 * (3 + 1) * 4;

struct Outcome {
  bool settled = false;
  int settled_at = -1;        // the tick it settled on
  uint64_t kept_at_half = 0;  // raises kept by the middle of the run
  uint64_t lowest_workers = 0;
  uint64_t lowest_capacity = 0;
};

// Runs `tuner` for `ticks` ticks against `pipeline`, applying its changes.
Outcome RunTuner(Autotuner& tuner, SyntheticPipeline& pipeline, int ticks) {
  Outcome outcome;
  outcome.lowest_workers = tuner.settings()[0].value;
  outcome.lowest_capacity = tuner.settings()[1].value;
  for (int tick = 0; tick < ticks; ++tick) {
    const std::vector<Autotuner::Change> changes =
        tuner.Tick(pipeline.Measure(tuner.settings()));
    if (tick == ticks / 2) outcome.kept_at_half = tuner.Metrics().adjustments();
    for (const Autotuner::Change& change : changes) {
      EXPECT_EQ(tuner.settings()[change.index].value, change.value);
    }
    outcome.lowest_workers =
        std::min(outcome.lowest_workers, tuner.settings()[0].value);
    outcome.lowest_capacity =
        std::min(outcome.lowest_capacity, tuner.settings()[1].value);
    if (tuner.settled() && !outcome.settled) {
      outcome.settled = true;
      outcome.settled_at = tick;
    }
  }
  return outcome;
}

TEST(AutotunerTest, ClimbsFromABadConfigToTheBestAndSettles) {
  SyntheticPipeline pipeline(/*best_workers=*/3, /*best_capacity=*/64,
                             /*noise=*/0, /*seed=*/1);
  Autotuner tuner(SyntheticPipeline::Settings(1, 1), {});
  const Outcome outcome = RunTuner(tuner, pipeline, 200);
  EXPECT_TRUE(outcome.settled);
  EXPECT_EQ(tuner.settings()[0].value, 3u);
  EXPECT_GE(tuner.settings()[1].value, 64u);
  EXPECT_EQ(outcome.lowest_workers, 1u);
  EXPECT_EQ(outcome.lowest_capacity, 1u);
  const AutotuneMetricsProto metrics = tuner.Metrics();
  ASSERT_EQ(metrics.setting_size(), 2);
  EXPECT_EQ(metrics.setting(0).configured(), 1u);
  EXPECT_EQ(metrics.setting(0).chosen(), 3u);
  EXPECT_TRUE(metrics.settled());
  // Kept: a joint trial (a worker, and the capacity 1 to 256: small items),
  // then a third worker alone; at three workers the stage is no longer
  // short of workers and the channel no longer flaps: no more is tried.
  EXPECT_EQ(metrics.adjustments(), 2u);
  EXPECT_EQ(metrics.trials(), 2u);
  EXPECT_NEAR(metrics.items_per_second(), pipeline.Rate(3, 64), 1);
}

TEST(AutotunerTest, NeverGoesBelowTheConfiguredSettings) {
  SyntheticPipeline pipeline(/*best_workers=*/2, /*best_capacity=*/16,
                             /*noise=*/0.2, /*seed=*/7);
  // Configured above what helps: nothing to gain, nothing lowered.
  Autotuner tuner(SyntheticPipeline::Settings(4, 256), {});
  const Outcome outcome = RunTuner(tuner, pipeline, 200);
  EXPECT_TRUE(outcome.settled);
  EXPECT_EQ(outcome.lowest_workers, 4u);
  EXPECT_EQ(outcome.lowest_capacity, 256u);
}

// Under a co-runner (every tick's throughput off by up to 15 % either way)
// the tuner still settles, in a bounded number of ticks and trials, within
// the band: the workers within one of the best, the pipeline at half its
// best rate or more (the bad config: a sixth); it keeps nothing more in
// the second half of the run.
TEST(AutotunerTest, UnderACoRunnerSettlesWithinABandWithoutOscillating) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SyntheticPipeline pipeline(/*best_workers=*/3, /*best_capacity=*/64,
                               /*noise=*/0.15, seed);
    Autotuner tuner(SyntheticPipeline::Settings(1, 1), {});
    const Outcome outcome = RunTuner(tuner, pipeline, 2000);
    ASSERT_TRUE(outcome.settled) << "seed " << seed;
    EXPECT_LE(outcome.settled_at, kSettleTicks) << "seed " << seed;
    const AutotuneMetricsProto metrics = tuner.Metrics();
    EXPECT_LE(metrics.trials(), kMaxTrials) << "seed " << seed;
    // Nothing kept in the second half: no drift, no oscillation.
    EXPECT_EQ(metrics.adjustments(), outcome.kept_at_half) << "seed " << seed;
    const uint64_t workers = tuner.settings()[0].value;
    EXPECT_GE(workers, 2u) << "seed " << seed;
    EXPECT_LE(workers, 4u) << "seed " << seed;
    EXPECT_GE(pipeline.Rate(workers, tuner.settings()[1].value),
              0.5 * pipeline.Rate(3, 64))
        << "seed " << seed;
  }
}

TEST(AutotunerTest, StaysWithinTheMemoryHeadroom) {
  SyntheticPipeline pipeline(/*best_workers=*/6, /*best_capacity=*/64,
                             /*noise=*/0, /*seed=*/1);
  // Room for two more workers (1000 bytes each) and nothing else.
  Autotuner tuner(SyntheticPipeline::Settings(1, 1), {.headroom_bytes = 2000});
  RunTuner(tuner, pipeline, 300);
  EXPECT_TRUE(tuner.settled());
  const uint64_t added = (tuner.settings()[0].value - 1) * 1000 +
                         (tuner.settings()[1].value - 1) * 10;
  EXPECT_LE(added, 2000u);
  EXPECT_GE(tuner.settings()[0].value, 2u);
}

// A stage whose workers stay busy past two of them (two cores, both full):
// it keeps looking short of workers, so a third one is tried, gains
// nothing and is put back, in both rounds; then it is settled at two.
TEST(AutotunerTest, KeepsNoWorkerThatGainsNothing) {
  std::vector<TunedSetting> settings = SyntheticPipeline::Settings(1, 1);
  settings.pop_back();  // the stage's parallelism alone
  Autotuner tuner(settings, {});
  for (int tick = 0; tick < 200 && !tuner.settled(); ++tick) {
    const uint64_t workers = tuner.settings()[0].value;
    tuner.Tick({.seconds = 0.25,
                .progress = 250 * std::min<uint64_t>(workers, 2),
                .pressure = {2}});
  }
  ASSERT_TRUE(tuner.settled());
  EXPECT_EQ(tuner.settings()[0].value, 2u);
  EXPECT_EQ(tuner.Metrics().adjustments(), 1u);
  EXPECT_EQ(tuner.Metrics().trials(), 3u);
}

TEST(AutotunerTest, TicksInWhichNothingMovesAreNotMeasured) {
  Autotuner tuner(SyntheticPipeline::Settings(1, 1), {});
  const AutotuneSample idle{.seconds = 0.25, .progress = 0, .pressure = {5, 5}};
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(tuner.Tick(idle).empty());
  EXPECT_FALSE(tuner.settled());
  EXPECT_EQ(tuner.Metrics().trials(), 0u);
}

// A stage whose workers wait on a channel of as many items as the workers
// it can feed: a worker or a capacity raised alone gains nothing, both
// together do. The tuner's joint trials raise them together and climb.
TEST(AutotunerTest, RaisesTogetherWhatGainsNothingAlone) {
  Autotuner tuner(SyntheticPipeline::Settings(1, 1), {});
  auto measure = [](const std::vector<TunedSetting>& settings) {
    const uint64_t workers = settings[0].value;
    const uint64_t capacity = settings[1].value;
    AutotuneSample sample;
    sample.seconds = 0.25;
    sample.progress = 250 * std::min<uint64_t>({workers, capacity, 4});
    sample.pressure = {workers < 4 ? 1.5 : 0.5, capacity < 4 ? 1.5 : 0.5};
    return sample;
  };
  for (int tick = 0; tick < 400 && !tuner.settled(); ++tick) {
    tuner.Tick(measure(tuner.settings()));
  }
  ASSERT_TRUE(tuner.settled());
  EXPECT_EQ(std::min<uint64_t>(
                {tuner.settings()[0].value, tuner.settings()[1].value, 4}),
            4u);
  EXPECT_GE(tuner.Metrics().adjustments(), 1u);
}

// Two channels that flap but gain nothing from more room: in each of the
// two rounds the joint trial raises both and is rejected; the capacities'
// own trial would raise the same two, so it is not run again.
TEST(AutotunerTest, DoesNotRepeatARejectedJointTrialAlone) {
  std::vector<TunedSetting> settings = SyntheticPipeline::Settings(1, 1);
  settings[0] = settings[1];
  settings[0].stage = "read";
  Autotuner tuner(settings, {});
  const AutotuneSample flat{
      .seconds = 0.25, .progress = 250, .pressure = {3, 3}};
  for (int tick = 0; tick < 100 && !tuner.settled(); ++tick) tuner.Tick(flat);
  ASSERT_TRUE(tuner.settled());
  EXPECT_EQ(tuner.Metrics().trials(), 2u);
  EXPECT_EQ(tuner.Metrics().adjustments(), 0u);
  EXPECT_EQ(tuner.settings()[0].value, 1u);
  EXPECT_EQ(tuner.settings()[1].value, 1u);
}

// From a bad config the first trial raises every setting under pressure,
// and a kept joint trial is followed by another.
TEST(AutotunerTest, FirstRaisesEverythingUnderPressureTogether) {
  SyntheticPipeline pipeline(/*best_workers=*/3, /*best_capacity=*/64,
                             /*noise=*/0, /*seed=*/1);
  Autotuner tuner(SyntheticPipeline::Settings(1, 1), {});
  std::vector<Autotuner::Change> first;
  for (int tick = 0; tick < 20 && first.empty(); ++tick) {
    first = tuner.Tick(pipeline.Measure(tuner.settings()));
  }
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(tuner.settings()[0].value, 2u);
  // A channel of small items (10 bytes each) goes straight to 256.
  EXPECT_EQ(tuner.settings()[1].value, 256u);
}

// The capacity a channel of items of `bytes_each` bytes is first raised to
// from 1 item.
uint64_t FirstRaisedCapacity(uint64_t bytes_each) {
  std::vector<TunedSetting> settings = SyntheticPipeline::Settings(1, 1);
  settings.erase(settings.begin());  // the channel alone
  settings[0].bytes_each = bytes_each;
  Autotuner tuner(settings, {});
  const AutotuneSample sample{
      .seconds = 0.25, .progress = 250, .pressure = {3}};
  std::vector<Autotuner::Change> first;
  for (int tick = 0; tick < 20 && first.empty(); ++tick) {
    first = tuner.Tick(sample);
  }
  EXPECT_EQ(first.size(), 1u);
  return tuner.settings()[0].value;
}

// A channel's first raise: to 256 items when 256 of them fit in 4 MiB,
// else to 64 when 64 do, else to 16 (a channel of large batches holds
// few); items of unknown size go to 16.
TEST(AutotunerTest, AChannelIsFirstRaisedToWhatFitsIn4MiB) {
  EXPECT_EQ(FirstRaisedCapacity(16 << 10), 256u);
  EXPECT_EQ(FirstRaisedCapacity((16 << 10) + 1), 64u);
  EXPECT_EQ(FirstRaisedCapacity(64 << 10), 64u);
  EXPECT_EQ(FirstRaisedCapacity((64 << 10) + 1), 16u);
  EXPECT_EQ(FirstRaisedCapacity(1 << 20), 16u);
  EXPECT_EQ(FirstRaisedCapacity(0), 16u);
}

// A baseline measured while a burst of other work ran fast (twice the
// pipeline's usual rate) makes the first round reject a real gain; the
// second round's fresh baseline keeps it.
TEST(AutotunerTest, ASecondRoundFromAFreshBaselineKeepsWhatALuckyOneHid) {
  std::vector<TunedSetting> settings = SyntheticPipeline::Settings(1, 1);
  settings.pop_back();  // the stage's parallelism alone
  Autotuner tuner(settings, {});
  int tick = 0;
  for (; tick < 100 && !tuner.settled(); ++tick) {
    const uint64_t workers = tuner.settings()[0].value;
    const double rate = tick < 4 ? 2000 : (workers >= 2 ? 1200 : 1000);
    tuner.Tick({.seconds = 0.25,
                .progress = static_cast<uint64_t>(rate * 0.25),
                .pressure = {workers < 2 ? 1.5 : 0.5}});
  }
  ASSERT_TRUE(tuner.settled());
  EXPECT_EQ(tuner.settings()[0].value, 2u);
  EXPECT_EQ(tuner.Metrics().adjustments(), 1u);
  EXPECT_EQ(tuner.Metrics().trials(), 2u);
}

TEST(AutotunerTest, NothingToTuneIsSettledAtOnce) {
  Autotuner tuner({}, {});
  EXPECT_TRUE(tuner.settled());
  EXPECT_TRUE(tuner.Tick({.seconds = 1, .progress = 10}).empty());
}

}  // namespace
}  // namespace sluice
