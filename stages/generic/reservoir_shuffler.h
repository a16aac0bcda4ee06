// ReservoirShuffler<T>: the reservoir that shuffles a stream of items, for
// any item type; the one core of the generic shuffle_buffer (Example) and
// lc0's shuffling_frame_sampler (Frame). A stage owns one, validates its own
// config fields, and runs it as its only worker:
//
//   ReservoirShuffler<Example> shuffler(size, min_fill,
//                                       ReservoirSeed(context));
//   SpawnWorkers(runtime, 1, [this](int) {
//     return shuffler_.Run(input_, output_, load_meter());
//   });
//   ReservoirMetrics m = shuffler_.TakeMetrics();  // in AddMetrics()
//
// Promises of Run():
// - Nothing is emitted until `min_fill` items are in; while the input is
//   open the reservoir never drains below `min_fill` (0: an item may pass
//   straight through).
// - Once the reservoir holds `size` items, each incoming item takes the slot
//   of a uniformly chosen resident, which is emitted (waiting for room
//   downstream).
// - Between the two, after each incoming item it emits uniformly chosen
//   residents while the output has room and the reservoir is above
//   `min_fill`; when the output is full it keeps the item instead, so the
//   reservoir grows towards `size` while downstream is the bottleneck.
//   (The room is read once per group of items taken from the input at
//   once, and what a group emits is sent under one lock of the output.) With
//   min_fill == size the output is a pure function of the input order and
//   the seed.
// - Deterministic mode (constructed with `deterministic`): between the two,
//   the reservoir grows on a fixed schedule instead of by downstream room:
//   after each incoming item it emits uniformly chosen residents while it
//   holds more than min(size, min_fill + n / 2), n being the items taken in
//   since it reached min_fill. The output is then always a pure function of
//   the input order and the seed.
// - When the input ends, every resident is emitted in random order, then
//   Run returns (the stage closes its output): a finite stream loses
//   nothing and duplicates nothing.
// - Randomness comes only from the generator seeded at construction.
// - It yields to the executor every few thousand items, so a shuffler whose
//   channel operations never suspend cannot monopolise a thread. It returns
//   at its next channel wait once the output is cancelled (Stop()).
//
// Checkpoints (deterministic mode, for item types with CheckpointRef and
// CheckpointCursor, found by argument-dependent lookup, see
// engine/checkpoint.h): after EnableJournal(), the shuffler logs the
// references of the items it emits until downstream acknowledges them, and
// Save() gives its state between two items as references: the emitted
// items downstream still needs, the reservoir, the generator and where its
// input must resume. Restore() (before Run) takes the items those
// references name, read again, and Run then emits the pending ones first.
//
// The metric both stages report (how well the stream is being shuffled):
// the reservoir's fill against its capacity, and items received and
// emitted. For item types that say what one holds (ResidentBytes(item),
// found by argument-dependent lookup; lc0's Frame), also the bytes the
// residents hold, so a bounded reservoir filling up is told apart from a
// leak. TakeMetrics() may be called from any thread.
#ifndef SLUICE_STAGES_GENERIC_RESERVOIR_SHUFFLER_H_
#define SLUICE_STAGES_GENERIC_RESERVOIR_SHUFFLER_H_

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "asio/awaitable.hpp"
#include "engine/channel.h"
#include "engine/checkpoint.h"
#include "engine/load_meter.h"
#include "engine/stable_hash.h"
#include "engine/stage_context.h"
#include "engine/yield.h"

namespace sluice {

// The seed of a stage's reservoir: the pipeline seed and the stage name, so
// parallel shufflers are independent and reproducible.
inline uint64_t ReservoirSeed(const StageContext& context) {
  return HashCombine(context.seed(), Fnv1a64(context.name()));
}

// Reservoir metrics since the previous TakeMetrics().
struct ReservoirMetrics {
  uint64_t capacity = 0;  // `size`
  uint64_t fill = 0;      // residents now (a gauge)
  uint64_t received = 0;
  uint64_t emitted = 0;
  // What the residents hold (a gauge); 0 for item types without
  // ResidentBytes.
  uint64_t resident_bytes = 0;
};

// The state ReservoirShuffler::Save() gives (references, see above).
struct ReservoirState {
  std::vector<ItemRef> pending;    // emitted, not yet acknowledged
  std::vector<ItemRef> reservoir;  // slot by slot
  uint64_t random_state = 0;
  uint64_t past_min_fill = 0;
  // Where the input must resume: group `from`, less its first `skip`.
  uint64_t from = 0;
  uint32_t skip = 0;
};

template <typename T>
class ReservoirShuffler {
  static constexpr bool kJournaled = requires(const T& item) {
    { CheckpointRef(item) } -> std::same_as<ItemRef>;
    { CheckpointCursor(item) } -> std::same_as<StreamCursor>;
  };
  static constexpr bool kSized = requires(const T& item) {
    { ResidentBytes(item) } -> std::convertible_to<uint64_t>;
  };

 public:
  // `size` at least 1, `min_fill` at most `size` (the stage checks both).
  ReservoirShuffler(uint64_t size, uint64_t min_fill, uint64_t seed,
                    bool deterministic = false)
      : size_(size),
        min_fill_(min_fill),
        deterministic_(deterministic),
        random_(seed) {
    reservoir_.reserve(std::min(size, kMaxReserve));
  }
  ReservoirShuffler(const ReservoirShuffler&) = delete;
  ReservoirShuffler& operator=(const ReservoirShuffler&) = delete;

  uint64_t size() const { return size_; }
  uint64_t min_fill() const { return min_fill_; }
  // Residents now. Only for the coroutine running the shuffler (and tests).
  size_t residents() const { return reservoir_.size(); }
  // What the residents hold (ResidentBytes summed; 0 without it). Only as
  // residents().
  uint64_t resident_bytes() const { return resident_bytes_; }

  // The steps Run() is made of, public for tests. Not thread-safe.
  //
  // Takes `item` in. Below `size` it becomes a resident (nullopt); at
  // `size` it takes the slot of a uniformly chosen resident, which is
  // returned and must be emitted.
  std::optional<T> Admit(T item) {
    resident_bytes_ += BytesOf(item);
    if (reservoir_.size() < size_) {
      reservoir_.push_back(std::move(item));
      return std::nullopt;
    }
    std::swap(item, reservoir_[random_.Below(reservoir_.size())]);
    resident_bytes_ -= BytesOf(item);
    return item;
  }
  // Moves uniformly chosen residents to `out` while the reservoir is above
  // min_fill, at most `room` of them (journaled: they are decided for
  // output); returns how many.
  size_t TakeWhileRoom(size_t room, std::vector<T>& out) {
    size_t taken = 0;
    while (taken < room && reservoir_.size() > min_fill_) {
      out.push_back(TakeRandom());
      Journal(out.back());
      ++taken;
    }
    return taken;
  }
  // Removes and returns a uniformly chosen resident; needs residents() > 0.
  T TakeRandom() { return TakeSlot(random_.Below(reservoir_.size())); }

  // Deterministic mode: counts an item just taken in (after Admit) and
  // returns how many residents the schedule allows now.
  uint64_t ScheduledResidents() {
    if (reservoir_.size() >= min_fill_) ++past_min_fill_;
    return std::min(size_, min_fill_ + past_min_fill_ / 2);
  }

  // Shuffles `input` into `output` (see the file comment) until the input
  // ends and the reservoir is drained, or the output is cancelled. Does not
  // close `output`. Channel waits are reported to `meter`.
  asio::awaitable<void> Run(Channel<T>* input, Channel<T>* output,
                            LoadMeter* meter) {
    // A restored shuffler first emits what it had emitted that downstream
    // did not keep (journaled by Restore).
    for (T& item : restored_pending_) {
      if (!co_await output->Send(std::move(item), meter)) co_return;
      emitted_.fetch_add(1, std::memory_order_relaxed);
    }
    restored_pending_ = std::vector<T>();
    uint64_t handled = 0;
    std::vector<T> incoming = std::move(put_back_);
    incoming.reserve(kItemsPerReceive);
    std::vector<T> outgoing;
    while (true) {
      if (incoming.empty()) {
        const bool received =
            co_await input->ReceiveSome(incoming, kItemsPerReceive, meter);
        if (!received) break;
      }
      received_.fetch_add(incoming.size(), std::memory_order_relaxed);
      // What the group emits goes to `outgoing` in the order decided (and
      // journaled) and is sent at the end of the group. Each item is taken
      // in and its residents decided under one lock, so a checkpoint never
      // sees an item taken in without what it emits. Not deterministic:
      // within the output's room read now (it only grows meanwhile: this is
      // the output's only sender); an evicted item is emitted even without
      // room.
      size_t room = deterministic_ ? 0 : output->Room();
      for (T& item : incoming) {
        const std::unique_lock lock = Lock();
        if (Skip(item)) continue;
        if (std::optional<T> evicted = Admit(std::move(item))) {
          Journal(*evicted);
          outgoing.push_back(*std::move(evicted));
          if (room > 0) --room;
        }
        if (deterministic_) {
          const uint64_t allowed = ScheduledResidents();
          TakeWhileRoom(
              reservoir_.size() > allowed ? reservoir_.size() - allowed : 0,
              outgoing);
        } else {
          room -= TakeWhileRoom(room, outgoing);
        }
      }
      if (!co_await output->SendAll(std::span<T>(outgoing), meter)) co_return;
      emitted_.fetch_add(outgoing.size(), std::memory_order_relaxed);
      outgoing.clear();
      handled += incoming.size();
      incoming.clear();
      UpdateFill();
      AcknowledgeInput();
      if (output->IsClosed()) co_return;  // cancelled by Stop()
      if (handled >= kItemsPerYield) {
        handled = 0;
        co_await YieldToOtherCoroutines();
      }
    }
    // The input ended: drain the reservoir in random order.
    while (true) {
      std::optional<T> item;
      {
        const std::unique_lock lock = Lock();
        if (reservoir_.empty()) break;
        item = TakeRandom();
        Journal(*item);
      }
      UpdateFill();
      if (!co_await output->Send(std::move(*item), meter)) co_return;
      emitted_.fetch_add(1, std::memory_order_relaxed);
      if (++handled % kItemsPerYield == 0) co_await YieldToOtherCoroutines();
    }
  }

  // Checkpoints (see the file comment); only for journaled item types.
  //
  // Before Run(): log emitted items from now on, and report the input
  // group of the last item taken in to `acknowledge_input` after each
  // receive (the input stage may forget the groups before it).
  void EnableJournal(std::function<void(uint64_t)> acknowledge_input) requires
      kJournaled {
    journal_enabled_ = true;
    acknowledge_input_ = std::move(acknowledge_input);
  }
  bool journaled() const { return journal_enabled_; }
  // Downstream keeps the first `consumed` items emitted in this run: the
  // journal forgets them. Thread-safe.
  void Acknowledge(uint64_t consumed) {
    std::lock_guard lock(mu_);
    while (journal_base_ < consumed && !journal_.empty()) {
      journal_.pop_front();
      ++journal_base_;
    }
  }
  // The state from which a restored shuffler emits again from its item
  // `from` (of this run) on. Thread-safe. False when `from` was already
  // acknowledged or is beyond what was emitted.
  std::optional<ReservoirState> Save(uint64_t from) requires kJournaled {
    std::lock_guard lock(mu_);
    if (from < journal_base_ || from > journal_base_ + journal_.size()) {
      return std::nullopt;
    }
    ReservoirState saved;
    saved.pending.assign(journal_.begin() + (from - journal_base_),
                         journal_.end());
    saved.reservoir.reserve(reservoir_.size());
    for (const T& item : reservoir_) {
      saved.reservoir.push_back(CheckpointRef(item));
    }
    saved.random_state = random_.state();
    saved.past_min_fill = past_min_fill_;
    if (last_taken_) {
      saved.from = last_taken_->position;
      saved.skip = last_taken_->ordinal + 1;
    } else {
      saved.from = 0;
      saved.skip = skip_below_;
    }
    return saved;
  }
  // Before Run(), after EnableJournal(): continue from a saved state whose
  // references were read again (`reservoir` slot by slot, `pending` in
  // order; items that could not be read are left out). The input resumes
  // at group 0 of this run, less its first `skip` items.
  void Restore(std::vector<T> reservoir, std::vector<T> pending,
               uint64_t random_state, uint64_t past_min_fill,
               uint32_t skip) requires kJournaled {
    std::lock_guard lock(mu_);
    reservoir_ = std::move(reservoir);
    resident_bytes_ = 0;
    for (const T& item : reservoir_) resident_bytes_ += BytesOf(item);
    random_ = StableRandom(random_state);
    past_min_fill_ = past_min_fill;
    skip_below_ = skip;
    for (const T& item : pending) Journal(item);
    restored_pending_ = std::move(pending);
    UpdateFill();
  }

  // Before Run(): an item already taken from the input (by a stage that
  // read its restored items up to the first of the stream), which Run
  // takes in first.
  void PutBack(T item) { put_back_.push_back(std::move(item)); }

  // Metrics since the previous call; thread-safe.
  ReservoirMetrics TakeMetrics() {
    return {.capacity = size_,
            .fill = fill_.load(std::memory_order_relaxed),
            .received = received_.exchange(0, std::memory_order_relaxed),
            .emitted = emitted_.exchange(0, std::memory_order_relaxed),
            .resident_bytes =
                published_resident_bytes_.load(std::memory_order_relaxed)};
  }

 private:
  // Items handled between two yields to the executor.
  static constexpr uint64_t kItemsPerYield = 4096;
  // Items taken from the input channel at once (one lock for all).
  static constexpr size_t kItemsPerReceive = 64;
  // The reservoir's vector grows on demand beyond this many slots, so that
  // a large `size` costs nothing until items arrive.
  static constexpr uint64_t kMaxReserve = 1 << 16;

  // Removes resident `slot` (the last one takes its place).
  T TakeSlot(size_t slot) {
    T item = std::move(reservoir_[slot]);
    if (slot + 1 != reservoir_.size()) {
      reservoir_[slot] = std::move(reservoir_.back());
    }
    reservoir_.pop_back();
    resident_bytes_ -= BytesOf(item);
    return item;
  }

  static uint64_t BytesOf(const T& item) {
    if constexpr (kSized) {
      return ResidentBytes(item);
    } else {
      return 0;
    }
  }

  void UpdateFill() {
    fill_.store(reservoir_.size(), std::memory_order_relaxed);
    published_resident_bytes_.store(resident_bytes_, std::memory_order_relaxed);
  }

  // Journaling (under mu_): logs an item decided for output.
  void Journal(const T& item) {
    if constexpr (kJournaled) {
      if (journal_enabled_) journal_.push_back(CheckpointRef(item));
    }
  }
  // Notes `item` as taken from the input; true when it is one a restored
  // shuffler had already taken in (group 0, ordinal below the skip), to be
  // dropped.
  bool Skip(const T& item) {
    if constexpr (kJournaled) {
      if (!journal_enabled_) return false;
      const StreamCursor cursor = CheckpointCursor(item);
      last_taken_ = cursor;
      return skip_below_ > 0 && cursor.position == 0 &&
             cursor.ordinal < skip_below_;
    }
    return false;
  }
  // mu_ locked while journaling (Save and Acknowledge may run on other
  // threads), not otherwise: nothing else reads the state then.
  std::unique_lock<std::mutex> Lock() {
    return journal_enabled_ ? std::unique_lock(mu_)
                            : std::unique_lock<std::mutex>();
  }
  void AcknowledgeInput() {
    if (!acknowledge_input_) return;
    uint64_t position;
    {
      std::lock_guard lock(mu_);
      if (!last_taken_) return;
      position = last_taken_->position;
    }
    acknowledge_input_(position);
  }

  const uint64_t size_;
  const uint64_t min_fill_;
  const bool deterministic_;
  // Changed only by the coroutine running the shuffler; under mu_ (which
  // Save() and Acknowledge() take) once journaling (Lock()).
  std::mutex mu_;
  std::vector<T> reservoir_;
  uint64_t resident_bytes_ = 0;  // BytesOf summed over reservoir_
  uint64_t past_min_fill_ = 0;   // items taken in since min_fill was reached
  StableRandom random_;
  // Checkpoints: emitted items from number journal_base_ on; the last item
  // taken in; a restored shuffler's skip and pending items.
  bool journal_enabled_ = false;
  std::function<void(uint64_t)> acknowledge_input_;
  std::deque<ItemRef> journal_;
  uint64_t journal_base_ = 0;
  std::optional<StreamCursor> last_taken_;
  uint32_t skip_below_ = 0;
  std::vector<T> restored_pending_;
  std::vector<T> put_back_;
  std::atomic<uint64_t> fill_{0};
  std::atomic<uint64_t> published_resident_bytes_{0};
  std::atomic<uint64_t> received_{0};
  std::atomic<uint64_t> emitted_{0};
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_RESERVOIR_SHUFFLER_H_
