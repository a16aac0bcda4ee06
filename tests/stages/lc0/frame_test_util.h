// Helpers for the tests of the lc0 frame stages (unpacker, sampler, tensor
// generator): a source stage that sends a fixed list of items, generated
// and crafted chunks, and the example configs with a data directory.
#ifndef SLUICE_TESTS_STAGES_LC0_FRAME_TEST_UTIL_H_
#define SLUICE_TESTS_STAGES_LC0_FRAME_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "asio/awaitable.hpp"
#include "engine/pipeline.h"
#include "engine/stage.h"
#include "engine/typed_batch.h"
#include "proto/data_loader_config.pb.h"
#include "stages/lc0/chunk.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/training_record.h"
#include "stages/lc0/frame.h"
#include "stages/stage_factory.h"

namespace sluice::lc0::testing {

// A source stage that sends its items in order, then closes its output.
template <typename T>
class ListSource final : public Stage {
 public:
  ListSource(const StageContext& context, std::shared_ptr<std::vector<T>> items)
      : Stage(context), items_(std::move(items)), output_(AddOutput<T>()) {}

  void Start(const StageRuntime& runtime) override {
    SpawnWorkers(runtime, 1, [this](int) { return Produce(); });
  }

 private:
  asio::awaitable<void> Produce() {
    for (T& item : *items_) {
      if (!co_await output_->Send(std::move(item), load_meter())) break;
    }
  }

  std::shared_ptr<std::vector<T>> items_;
  Channel<T>* const output_;
};

// The stage factory, except that the stage called `source_name` (its config
// may set any stage type, e.g. `counting_source {}`) is a ListSource of
// `items`.
template <typename T>
StageFactory FactoryWithSource(std::string source_name, std::vector<T> items) {
  auto shared = std::make_shared<std::vector<T>>(std::move(items));
  return [source_name, shared](const StageContext& context)
             -> absl::StatusOr<std::unique_ptr<Stage>> {
    if (context.name() == source_name) {
      return std::unique_ptr<Stage>(new ListSource<T>(context, shared));
    }
    return CreateStage(context);
  };
}

// Frames labelled 0..count-1 in game_id (and in the record's reserved field).
// The record of `frame`, unpacked.
V6TrainingRecord Unpacked(const Frame& frame);

std::vector<Frame> LabelledFrames(uint64_t count);

// The raw (uncompressed) chunk of generated game `game` (V6 unless told).
std::string RawGame(uint64_t game, int version = 6, int input_format = 1);

// A Chunk of `raw` gzipped, named ("test", index).
Chunk MakeChunk(const std::string& raw, uint64_t index);

// Record `i` of a raw V6 chunk, as a struct (copy in, copy out).
V6TrainingRecord GetRecord(const std::string& raw, size_t i);
void SetRecord(std::string* raw, size_t i, const V6TrainingRecord& record);

// A hash of one position's five tensors in `batch` (equal tensors, equal
// hashes).
uint64_t PositionHash(const TensorBatch& batch, size_t slot);
// The same hash of slot `slot` of the tensor generator's output.
uint64_t PositionHash(const TypedBatch& batch, size_t slot);

// proto/examples/NAME.textproto with every file_path_provider directory set
// to `data_dir` (see proto/examples/README.md).
DataLoaderConfig ExampleConfig(const std::string& name,
                               const std::string& data_dir);

}  // namespace sluice::lc0::testing

#endif  // SLUICE_TESTS_STAGES_LC0_FRAME_TEST_UTIL_H_
