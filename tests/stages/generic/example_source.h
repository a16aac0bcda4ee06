// Test helpers for the generic stages that take Examples: a source stage
// that sends a fixed list of examples, and a factory that puts it in place
// of one stage of a config.
//
//   DataLoader loader(FactoryWithExamples("source", IndexedExamples(100)));
//   loader.Configure(ParseConfig(R"pb(stage { name: "source"
//                                              counting_source {} } ...)pb"));
#ifndef SLUICE_TESTS_STAGES_GENERIC_EXAMPLE_SOURCE_H_
#define SLUICE_TESTS_STAGES_GENERIC_EXAMPLE_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "asio/awaitable.hpp"
#include "engine/pipeline.h"
#include "engine/stage.h"
#include "stages/generic/example.h"
#include "stages/generic/example_block.h"
#include "stages/stage_factory.h"

namespace sluice::testing {

// Sends its examples in order, then closes its output.
class ExampleListSource final : public Stage {
 public:
  ExampleListSource(const StageContext& context,
                    std::shared_ptr<const std::vector<Example>> examples)
      : Stage(context),
        examples_(std::move(examples)),
        output_(AddOutput<Example>()) {}

  void Start(const StageRuntime& runtime) override {
    SpawnWorkers(runtime, 1, [this](int) { return Produce(); });
  }

 private:
  asio::awaitable<void> Produce() {
    for (const Example& example : *examples_) {
      Example copy = example;
      if (!co_await output_->Send(std::move(copy), load_meter())) break;
    }
  }

  std::shared_ptr<const std::vector<Example>> examples_;
  Channel<Example>* const output_;
};

// The stage factory, except that the stage called `source_name` (its config
// may set any stage type, e.g. `counting_source {}`) is an
// ExampleListSource of `examples`. The factory may build several pipelines.
inline StageFactory FactoryWithExamples(std::string source_name,
                                        std::vector<Example> examples) {
  auto shared =
      std::make_shared<const std::vector<Example>>(std::move(examples));
  return [source_name, shared](const StageContext& context)
             -> absl::StatusOr<std::unique_ptr<Stage>> {
    if (context.name() == source_name) {
      return std::unique_ptr<Stage>(new ExampleListSource(context, shared));
    }
    return CreateStage(context);
  };
}

// Sends its blocks in order, then closes its output.
class BlockListSource final : public Stage {
 public:
  BlockListSource(const StageContext& context,
                  std::shared_ptr<const std::vector<ExampleBlock>> blocks)
      : Stage(context),
        blocks_(std::move(blocks)),
        output_(AddOutput<ExampleBlock>()) {}

  void Start(const StageRuntime& runtime) override {
    SpawnWorkers(runtime, 1, [this](int) { return Produce(); });
  }

 private:
  asio::awaitable<void> Produce() {
    for (const ExampleBlock& block : *blocks_) {
      ExampleBlock copy = block;
      if (!co_await output_->Send(std::move(copy), load_meter())) break;
    }
  }

  std::shared_ptr<const std::vector<ExampleBlock>> blocks_;
  Channel<ExampleBlock>* const output_;
};

// As FactoryWithExamples, with a BlockListSource of `blocks`.
inline StageFactory FactoryWithBlocks(std::string source_name,
                                      std::vector<ExampleBlock> blocks) {
  auto shared =
      std::make_shared<const std::vector<ExampleBlock>>(std::move(blocks));
  return [source_name, shared](const StageContext& context)
             -> absl::StatusOr<std::unique_ptr<Stage>> {
    if (context.name() == source_name) {
      return std::unique_ptr<Stage>(new BlockListSource(context, shared));
    }
    return CreateStage(context);
  };
}

// Examples 0..count-1, each with one int64 scalar field "index".
inline std::vector<Example> IndexedExamples(uint64_t count) {
  std::vector<Example> examples(count);
  for (uint64_t i = 0; i < count; ++i) {
    examples[i].Set("index",
                    ExampleField::Scalar<int64_t>(static_cast<int64_t>(i)));
  }
  return examples;
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_STAGES_GENERIC_EXAMPLE_SOURCE_H_
