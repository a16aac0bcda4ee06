// MemoryModel: what a pipeline holds in memory, stage by stage, as a
// function of its settings. Every term is `count` x `bytes_each` plus a
// fixed part, `count` being one setting (an output's capacity, a
// reservoir's size, read-ahead, parallelism) or fixed. Stages describe
// themselves (Stage::DescribeMemory) from their config alone, so the model
// is a pure function of the config; engine/memory_budget.h plans the
// settings of a budget from it.
//
//   MemoryModelBuilder builder(/*threads=*/2);
//   builder.BeginStage("sampler", "shuffling_frame_sampler", {input});
//   builder.AddOutput(output, "output", /*item_bytes=*/1400);
//   builder.Add({.part = "reservoir", .what = "frames in the reservoir", ...});
//   MemoryModel model = std::move(builder).Build();
//   model.Bytes();         // at the configured settings
//   model.MinimumBytes();  // with every setting at its least
//
// Item sizes travel with the channels: a stage declares the bytes of an
// item of each output, the stages downstream read them as their inputs'
// (InputItemBytes). Sizes that depend on the data (a compressed chunk, an
// encoded clip) are estimates stated in the stage's header.
#ifndef SLUICE_ENGINE_MEMORY_MODEL_H_
#define SLUICE_ENGINE_MEMORY_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class ChannelBase;

// The setting a memory term's count stands for. The budget lowers them in
// this order (engine/memory_budget.h); kFixed is never lowered.
enum class MemoryKnob {
  kFixed,        // no setting: the count is what it is
  kCapacity,     // an output channel's capacity (StageConfig.output)
  kReadahead,    // items read ahead (a stage-specific field)
  kReservoir,    // a reservoir's size (a stage-specific field)
  kParallelism,  // workers of the stage (a stage-specific field)
};

// One part of what a stage holds.
struct MemoryTerm {
  std::string stage;  // set by the builder
  // Unique within the stage: "output", "reservoir", "workers", ...
  std::string part;
  // For people: "frames in the reservoir".
  std::string what;
  MemoryKnob knob = MemoryKnob::kFixed;
  // The stage-specific config field `count` is ("reservoir_size"), or
  // "capacity" for an output.
  std::string field;
  std::string output;  // kCapacity: the output's name
  uint64_t count = 0;
  // The least the budget may lower `count` to (kFixed: count).
  uint64_t min_count = 0;
  uint64_t bytes_each = 0;
  uint64_t fixed_bytes = 0;
  // Stage-specific fields lowered in proportion when `count` is lowered
  // (a reservoir's min_fill), when they are set.
  std::vector<std::string> scaled_with;

  uint64_t BytesAt(uint64_t at) const { return at * bytes_each + fixed_bytes; }
  uint64_t Bytes() const { return BytesAt(count); }
  uint64_t MinimumBytes() const { return BytesAt(min_count); }
  // The setting as a person finds it in the config: "output 'output'
  // capacity" or "shuffling_frame_sampler.reservoir_size"; "" when fixed.
  std::string SettingName(std::string_view stage_type) const;
};

// The whole pipeline's model: the engine's fixed base plus the terms.
class MemoryModel {
 public:
  MemoryModel() = default;
  MemoryModel(uint64_t base_bytes, unsigned threads,
              std::vector<MemoryTerm> terms,
              std::map<std::string, std::string> stage_types)
      : base_bytes_(base_bytes),
        threads_(threads),
        terms_(std::move(terms)),
        stage_types_(std::move(stage_types)) {}

  uint64_t base_bytes() const { return base_bytes_; }
  unsigned threads() const { return threads_; }
  const std::vector<MemoryTerm>& terms() const { return terms_; }
  // The stage-specific config field of stage `stage` ("shuffle_buffer").
  std::string_view StageType(std::string_view stage) const;

  // Base plus every term at its count.
  uint64_t Bytes() const;
  // Base plus every term at its least count.
  uint64_t MinimumBytes() const;

 private:
  uint64_t base_bytes_ = 0;
  unsigned threads_ = 1;
  std::vector<MemoryTerm> terms_;
  std::map<std::string, std::string> stage_types_;
};

// The engine's fixed part: what a pipeline adds to a process whatever its
// stages (worker threads and their stacks, the allocator's per-thread
// arenas, the io_uring ring, metrics). Measured with
// bench/memory_budget_benchmark (docs/tuning.md).
uint64_t EngineBaseBytes(unsigned threads);

// Collects the terms stage by stage, in pipeline order.
class MemoryModelBuilder {
 public:
  // `threads`: the pipeline's worker threads (resolved, at least 1).
  explicit MemoryModelBuilder(unsigned threads) : threads_(threads) {}

  unsigned threads() const { return threads_; }

  // Starts the description of a stage: its name, type and input channels.
  void BeginStage(std::string name, std::string type,
                  std::vector<const ChannelBase*> inputs);
  // The bytes of an item of input `index` of the current stage, as its
  // producer declared them (kUnknownItemBytes when it declared none).
  uint64_t InputItemBytes(size_t index = 0) const;
  // Declares `channel`, output `name` of the current stage, with items of
  // `item_bytes`, and adds its term: capacity x item bytes, lowered down
  // to one item.
  void AddOutput(const ChannelBase* channel, const std::string& name,
                 uint64_t item_bytes);
  // Adds a term of the current stage.
  void Add(MemoryTerm term);

  MemoryModel Build() &&;

  // Item bytes assumed for an item nobody declared (a path, a counter).
  static constexpr uint64_t kUnknownItemBytes = 256;

 private:
  const unsigned threads_;
  std::string stage_;
  std::vector<const ChannelBase*> inputs_;
  std::map<const ChannelBase*, uint64_t> item_bytes_;
  std::vector<MemoryTerm> terms_;
  std::map<std::string, std::string> stage_types_;
};

// "12.3 MiB", "840.0 KiB", "512 B".
std::string FormatBytes(uint64_t bytes);

}  // namespace sluice

#endif  // SLUICE_ENGINE_MEMORY_MODEL_H_
