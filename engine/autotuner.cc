#include "engine/autotuner.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sluice {
namespace {

// The least capacity a raise moves a channel to: 16 items, or 64 or 256
// when that many fit in kSmallChannelBytes. Past 16 items a channel flaps
// too seldom to count as pressure again, so small items start large: lc0's
// frames, for one, go to 256 (its tuned settings gave about 12 % more
// batches/s with both frame channels at 256 than at 64).
constexpr uint64_t kLeastRaisedCapacity = 16;
constexpr uint64_t kMostLeastRaisedCapacity = 256;
constexpr uint64_t kSmallChannelBytes = uint64_t{4} << 20;
// Rounds of trials from one baseline to the next kept raise: each with its
// own baseline, a joint trial and each setting under pressure alone once.
constexpr int kRounds = 2;

}  // namespace

Autotuner::Autotuner(std::vector<TunedSetting> settings, Options options)
    : settings_(std::move(settings)),
      options_(options),
      rejected_(settings_.size(), false),
      headroom_bytes_(options.headroom_bytes) {
  if (settings_.empty()) phase_ = Phase::kSettled;
  RestartMeasurement();
}

std::vector<Autotuner::Change> Autotuner::Tick(const AutotuneSample& sample) {
  if (settings_.empty()) return {};
  if (phase_ == Phase::kSettled) {
    // A setting that was not rejected may come under pressure later (the
    // load moved): measure a fresh baseline, then try it, in one round.
    if (!HasCandidate(sample)) return {};
    phase_ = Phase::kBaseline;
    round_ = kRounds;
    strict_ = true;
    RestartMeasurement();
  }
  if (sample.progress == 0 || sample.seconds <= 0) {
    // Nothing to measure: start this measurement again.
    RestartMeasurement();
    return {};
  }
  ++ticks_;
  if (ticks_ > options_.warmup_ticks) {
    rates_.push_back(static_cast<double>(sample.progress) / sample.seconds);
    AddToMean(sample);
  }
  if (ticks_ < options_.warmup_ticks + options_.measure_ticks) return {};
  const Measurement measured = Measure(rates_);
  const AutotuneSample mean = MeanSample();
  RestartMeasurement();
  std::vector<Change> changes;
  if (phase_ == Phase::kTrial) {
    // The growth must exceed the measurements' noise: twice the standard
    // error of the difference of the two means.
    const double noise =
        2 * std::sqrt(baseline_.variance_of_mean + measured.variance_of_mean) /
        std::max(baseline_.rate, 1e-9);
    // Once settled, chance blips of pressure start trials all through a
    // long run: a raise then needs twice the gain and twice the margin
    // over the noise, or chance would keep some.
    const double bar = strict_ ? std::max(2 * options_.min_gain, 2 * noise)
                               : std::max(options_.min_gain, noise);
    if (measured.rate >= baseline_.rate * (1 + bar)) {
      baseline_ = measured;
      ++adjustments_;
      StartRound(1);
    } else {
      for (const auto& [index, from] : trial_) {
        TunedSetting& setting = settings_[index];
        headroom_bytes_ += (setting.value - from) * setting.bytes_each;
        setting.value = from;
        // A joint trial rejects no setting alone: each is tried next.
        if (!trial_together_) rejected_[index] = true;
        changes.push_back({index, setting.value});
      }
    }
  } else {
    baseline_ = measured;
  }
  std::vector<Change> next = StartTrial(mean);
  changes.insert(changes.end(), next.begin(), next.end());
  return changes;
}

void Autotuner::StartRound(int round) {
  round_ = round;
  std::fill(rejected_.begin(), rejected_.end(), false);
  tried_together_ = false;
  joint_trial_.clear();
}

void Autotuner::RestartMeasurement() {
  ticks_ = 0;
  rates_.clear();
  pressure_sum_.assign(settings_.size(), 0);
}

void Autotuner::AddToMean(const AutotuneSample& sample) {
  for (size_t i = 0; i < pressure_sum_.size() && i < sample.pressure.size();
       ++i) {
    pressure_sum_[i] += sample.pressure[i];
  }
}

AutotuneSample Autotuner::MeanSample() const {
  const double n = static_cast<double>(std::max<size_t>(rates_.size(), 1));
  AutotuneSample mean;
  for (double sum : pressure_sum_) mean.pressure.push_back(sum / n);
  return mean;
}

Autotuner::Measurement Autotuner::Measure(const std::vector<double>& rates) {
  Measurement measured;
  if (rates.empty()) return measured;
  for (double rate : rates) measured.rate += rate;
  measured.rate /= static_cast<double>(rates.size());
  if (rates.size() > 1) {
    double squares = 0;
    for (double rate : rates) {
      squares += (rate - measured.rate) * (rate - measured.rate);
    }
    const double n = static_cast<double>(rates.size());
    measured.variance_of_mean = squares / (n - 1) / n;
  }
  return measured;
}

uint64_t Autotuner::RaisedValue(size_t index) const {
  const TunedSetting& setting = settings_[index];
  // A capacity grows fourfold, and straight to the least raised capacity
  // (kLeastRaisedCapacity, above) from below: channels of one or a few
  // items hand over at every item, and a small step gains too little to
  // show above the noise.
  uint64_t least = kLeastRaisedCapacity;
  while (least < kMostLeastRaisedCapacity && setting.bytes_each > 0 &&
         setting.bytes_each * least * 4 <= kSmallChannelBytes) {
    least *= 4;
  }
  uint64_t raised = setting.is_parallelism
                        ? setting.value + 1
                        : std::max<uint64_t>(setting.value * 4, least);
  raised = std::min(raised, setting.max);
  if (setting.bytes_each > 0) {
    const uint64_t affordable =
        setting.value + headroom_bytes_ / setting.bytes_each;
    raised = std::min(raised, affordable);
  }
  return raised;
}

size_t Autotuner::BestCandidate(const AutotuneSample& sample) const {
  size_t best = settings_.size();
  double best_pressure = 1;
  for (size_t i = 0; i < settings_.size(); ++i) {
    if (rejected_[i] || i >= sample.pressure.size()) continue;
    if (RaisedValue(i) <= settings_[i].value) continue;
    if (sample.pressure[i] >= best_pressure) {
      best = i;
      best_pressure = sample.pressure[i];
    }
  }
  return best;
}

bool Autotuner::HasCandidate(const AutotuneSample& sample) const {
  return BestCandidate(sample) < settings_.size();
}

std::vector<size_t> Autotuner::UnderPressure(
    const AutotuneSample& sample) const {
  std::vector<size_t> indices;
  for (size_t i = 0; i < settings_.size() && i < sample.pressure.size(); ++i) {
    if (sample.pressure[i] < 1 || RaisedValue(i) <= settings_[i].value) {
      continue;
    }
    indices.push_back(i);
  }
  return indices;
}

std::vector<Autotuner::Change> Autotuner::StartTrial(
    const AutotuneSample& sample) {
  // First, everything under pressure at once: from a bad config one trial
  // gets most of the way, and settings that hold each other back gain only
  // together.
  if (!tried_together_) {
    tried_together_ = true;
    std::vector<size_t> together = UnderPressure(sample);
    if (together.size() > 1) {
      trial_together_ = true;
      joint_trial_ = together;
      return Raise(together);
    }
  }
  trial_together_ = false;
  while (true) {
    const size_t best = BestCandidate(sample);
    if (best == settings_.size()) {
      const bool rejected_some =
          !joint_trial_.empty() || std::find(rejected_.begin(), rejected_.end(),
                                             true) != rejected_.end();
      if (round_ < kRounds && rejected_some) {
        // Every raise of this round was rejected: a fresh baseline and a
        // second round (a co-runner may have made the baseline lucky or
        // the trials unlucky), from the pressures measured there.
        StartRound(round_ + 1);
        phase_ = Phase::kBaseline;
        return {};
      }
      phase_ = Phase::kSettled;
      return {};
    }
    // Capacities are raised together: channels too small in a row each
    // hold the others back, so one alone may gain nothing.
    std::vector<size_t> raise = {best};
    if (!settings_[best].is_parallelism) {
      for (size_t i : UnderPressure(sample)) {
        if (i != best && !settings_[i].is_parallelism && !rejected_[i]) {
          raise.push_back(i);
        }
      }
    }
    std::sort(raise.begin(), raise.end());
    if (raise != joint_trial_) return Raise(raise);
    // The joint trial raised exactly these and was rejected: so are they.
    for (size_t i : raise) rejected_[i] = true;
  }
}

std::vector<Autotuner::Change> Autotuner::Raise(
    const std::vector<size_t>& indices) {
  trial_.clear();
  std::vector<Change> changes;
  for (size_t index : indices) {
    TunedSetting& setting = settings_[index];
    const uint64_t raised = RaisedValue(index);
    if (raised <= setting.value) continue;  // the headroom ran out
    trial_.emplace_back(index, setting.value);
    headroom_bytes_ -= (raised - setting.value) * setting.bytes_each;
    setting.value = raised;
    changes.push_back({index, raised});
  }
  phase_ = Phase::kTrial;
  ++trials_;
  return changes;
}

AutotuneMetricsProto Autotuner::Metrics() const {
  AutotuneMetricsProto metrics;
  for (const TunedSetting& setting : settings_) {
    AutotuneSettingProto* out = metrics.add_setting();
    out->set_stage(setting.stage);
    out->set_setting(setting.setting);
    out->set_configured(setting.configured);
    out->set_chosen(setting.value);
    out->set_max(setting.max);
  }
  metrics.set_trials(trials_);
  metrics.set_adjustments(adjustments_);
  metrics.set_settled(settled());
  metrics.set_items_per_second(baseline_.rate);
  return metrics;
}

}  // namespace sluice
