// ReservoirStage<T>: a stage that shuffles its one input of T through a
// ReservoirShuffler<T> into its output "output", and takes and restores its
// checkpoints: the one body of the generic shuffle_buffer (Example) and of
// lc0's shuffling_frame_sampler (Frame). A stage derives from it, checks
// its own config fields in Create() and reports its metrics from
// shuffler().TakeMetrics():
//
//   class ShuffleBuffer final : public ReservoirStage<Example> { ... };
//   ShuffleBuffer::ShuffleBuffer(const StageContext& context, ...)
//       : ReservoirStage(context, size, min_fill, input,
//                        {.items = "examples",
//                         .missing_reason = "checkpoint_example_missing"}) {}
//
// Checkpoints (deterministic or resumable pipelines, engine/checkpoint.h):
// positions downstream are the items it emitted in this run; upstream, the
// items' cursors (CheckpointCursor). It saves one ReservoirCheckpoint
// (proto/loader_checkpoint.proto): the items it emitted that no batch
// handed out holds yet, in order, and its reservoir slot by slot, as
// references (CheckpointRef), with its generator, its growth schedule and
// where its input resumes; and it asks its input to read those items again
// ahead of the stream. A resumed stage takes what its input reads again
// (RestoreRoleOf(item): kRestored items up to a kEndOfRestore marker or
// the first kStream item), puts each item everywhere the checkpoint names
// it (a copy for the second place: CopyItem(item) where the item type has
// it, its copy constructor otherwise), emits the pending ones first, then
// shuffles on. References whose item did not come back (its file is gone or
// changed) are left out, counted under `missing_reason` and warned about.
// An elastic resume (engine/checkpoint.h) takes this rank's share of the
// old ranks' saved reservoirs (ShareOfReservoirs) and restores it the same
// way.
//
// Item types provide, found by argument-dependent lookup: CheckpointRef,
// CheckpointCursor, RestoreRoleOf, and optionally CopyItem and
// ResidentBytes (reservoir_shuffler.h).
#ifndef SLUICE_STAGES_GENERIC_RESERVOIR_STAGE_H_
#define SLUICE_STAGES_GENERIC_RESERVOIR_STAGE_H_

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "asio/awaitable.hpp"
#include "engine/checkpoint.h"
#include "engine/log.h"
#include "engine/stage.h"
#include "engine/status_macros.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/generic/reservoir_checkpoint.h"
#include "stages/generic/reservoir_shuffler.h"

namespace sluice {

// How a reservoir stage names its items in errors and metrics.
struct ReservoirItemNames {
  std::string_view items;           // "frames", "examples"
  std::string_view missing_reason;  // skip reason of an item not read again
  std::string_view size_field;      // the config field of the size
};

// The least a memory budget lowers a reservoir to: a tenth of its size
// (docs/tuning.md).
inline uint64_t LeastReservoirSize(uint64_t size) {
  return std::max<uint64_t>(size / 10, 1);
}

template <typename T>
class ReservoirStage : public Stage {
 public:
  // Memory: the reservoir (its size in items of the input's bytes, lowered
  // down to a tenth, min_fill in proportion) and the output.
  void DescribeMemory(MemoryModelBuilder& builder) const override {
    const uint64_t item_bytes = builder.InputItemBytes();
    builder.AddOutput(output_, "output", item_bytes);
    builder.Add(
        {.part = "reservoir",
         .what = absl::StrCat(std::string(names_.items), " in the reservoir"),
         .knob = MemoryKnob::kReservoir,
         .field = std::string(names_.size_field),
         .count = shuffler_.size(),
         .min_count = LeastReservoirSize(shuffler_.size()),
         .bytes_each = item_bytes,
         .scaled_with = {"min_fill"}});
  }
  void Start(const StageRuntime& runtime) override {
    SpawnWorkers(runtime, 1, [this](int) { return Run(); });
  }

  void PrepareCheckpoints() override {
    shuffler_.EnableJournal(
        [this](uint64_t position) { AcknowledgeUpstream(position); });
  }

  void Acknowledge(uint64_t consumed) override {
    shuffler_.Acknowledge(consumed);
  }

  absl::StatusOr<std::optional<ResumeRequest>> SaveCheckpoint(
      const ResumeRequest& downstream, std::string* state) override {
    if (!shuffler_.journaled()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "stage '", name(), "' is not on the chain of the pipeline's output"));
    }
    if (!restored_.load()) {
      // Still taking its restored items: nothing emitted, nothing taken in.
      resume_from_->SerializeToString(state);
      return RequestFor(*resume_from_, 0);
    }
    const std::optional<ReservoirState> now = shuffler_.Save(downstream.from);
    if (!now) {
      return absl::InternalError(
          absl::StrCat("stage '", name(), "': item ", downstream.from,
                       " of its output is no longer journaled"));
    }
    const ReservoirCheckpoint saved = ToCheckpoint(*now);
    saved.SerializeToString(state);
    return RequestFor(saved, now->from);
  }

  // Elastic resume: takes its share of the old ranks' reservoirs
  // (ShareOfReservoirs) and asks its input for those items.
  absl::StatusOr<std::optional<ElasticRequest>> PlanElasticResume(
      const std::vector<std::string>& states, const ElasticRequest& downstream,
      ElasticResume& resume) override {
    std::vector<ReservoirCheckpoint> old(states.size());
    for (size_t k = 0; k < states.size(); ++k) {
      if (!old[k].ParseFromString(states[k])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the reservoir's state of rank ", k, " does not parse"));
      }
      SLUICE_RETURN_IF_ERROR(CheckFits(old[k], shuffler_.size(), names_.items));
    }
    share_ = ShareOfReservoirs(old, resume.rank, resume.world_size,
                               shuffler_.size());
    return RequestFor(*share_);
  }
  absl::Status FinishElasticResume(const ElasticResume& resume) override {
    resume_from_ = ToCheckpoint(*share_, resume.translate);
    share_.reset();
    restored_.store(false);
    return absl::OkStatus();
  }

  absl::Status RestoreCheckpoint(const std::string& state) override {
    ReservoirCheckpoint saved;
    if (!saved.ParseFromString(state)) {
      return absl::InvalidArgumentError("the reservoir's state does not parse");
    }
    SLUICE_RETURN_IF_ERROR(CheckFits(saved, shuffler_.size(), names_.items));
    resume_from_ = std::move(saved);
    restored_.store(false);
    return absl::OkStatus();
  }

 protected:
  // `size` at least 1, `min_fill` at most `size` (checked by Create()).
  ReservoirStage(const StageContext& context, uint64_t size, uint64_t min_fill,
                 Channel<T>* input, ReservoirItemNames names)
      : Stage(context),
        input_(input),
        output_(this->template AddOutput<T>("output", 256)),
        shuffler_(size, min_fill, ReservoirSeed(context),
                  context.deterministic()),
        names_(names) {}

  ReservoirShuffler<T>& shuffler() { return shuffler_; }

 private:
  asio::awaitable<void> Run() {
    if (resume_from_.has_value()) {
      const bool restored = co_await TakeRestoredItems();
      if (!restored) co_return;
    }
    co_await shuffler_.Run(input_, output_, load_meter());
  }

  // A resumed stage: takes the items read again and restores the shuffler
  // from them; false when the stage stopped first.
  asio::awaitable<bool> TakeRestoredItems() {
    const ReservoirCheckpoint& saved = *resume_from_;
    std::map<ItemRef, T> items;
    while (true) {
      std::optional<T> item = co_await input_->Receive(load_meter());
      if (!item && output_->IsClosed()) co_return false;  // stopped
      if (!item) break;  // a stream that ends with the restore
      const RestoreRole role = RestoreRoleOf(*item);
      if (role == RestoreRole::kEndOfRestore) break;
      if (role == RestoreRole::kStream) {
        shuffler_.PutBack(*std::move(item));
        break;
      }
      const ItemRef ref = CheckpointRef(*item);
      items.emplace(ref, *std::move(item));
    }
    // Each item goes to every place that names it (a copy until the last).
    const std::vector<ItemRef> pending_refs = RefsOf(saved.pending());
    const std::vector<ItemRef> reservoir_refs = RefsOf(saved.reservoir());
    std::map<ItemRef, uint32_t> uses;
    for (const ItemRef& ref : pending_refs) ++uses[ref];
    for (const ItemRef& ref : reservoir_refs) ++uses[ref];
    uint64_t missing = 0;
    const auto take = [&](const std::vector<ItemRef>& refs) {
      std::vector<T> out;
      out.reserve(refs.size());
      for (const ItemRef& ref : refs) {
        auto it = items.find(ref);
        if (it == items.end()) {
          ++missing;
          continue;
        }
        if (--uses[ref] == 0) {
          out.push_back(std::move(it->second));
          items.erase(it);
        } else {
          out.push_back(Copy(it->second));
        }
      }
      return out;
    };
    std::vector<T> pending = take(pending_refs);
    std::vector<T> reservoir = take(reservoir_refs);
    if (missing > 0) {
      CountSkip(names_.missing_reason, missing);
      LogWarning("stage ", name(), ": resume: ", missing, " ", names_.items,
                 " of the checkpoint could not be read again (their files "
                 "are gone or changed); going on without them");
    }
    shuffler_.Restore(std::move(reservoir), std::move(pending),
                      saved.random_state(), saved.past_min_fill(),
                      static_cast<uint32_t>(saved.skip()));
    restored_.store(true);
    co_return !output_->IsClosed();
  }

  static T Copy(const T& item) {
    if constexpr (requires {
                    { CopyItem(item) } -> std::same_as<T>;
                  }) {
      return CopyItem(item);
    } else {
      return T(item);
    }
  }

  Channel<T>* const input_;
  Channel<T>* const output_;
  ReservoirShuffler<T> shuffler_;
  const ReservoirItemNames names_;
  // The checkpoint it resumes from, until its items are restored; an
  // elastic resume's share until every stage planned.
  std::optional<ReservoirCheckpoint> resume_from_;
  std::optional<ReservoirShare> share_;
  // False while a resumed stage is still taking its restored items.
  std::atomic<bool> restored_{true};
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_RESERVOIR_STAGE_H_
