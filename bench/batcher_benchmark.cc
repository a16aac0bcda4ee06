// Batcher benchmark: the generic batcher stage alone (stages/generic/
// batcher.h) assembling 1 KiB examples (one float32 field of shape {256})
// into batches of 1024, on 1 and 2 worker threads.
//
//   build/bench/batcher_benchmark [--examples N] [--block-mib N] [--runs N]
//
// The source is a pre-built list of N examples (default 262144, 256 MiB of
// example bytes), each a view into a block of --block-mib MiB (default 64,
// beyond the last-level cache) at slot i mod (block / 1 KiB): the examples
// are built before the clock starts and moved out, so the source costs only
// its channel sends. The consumer (the main thread) drops each batch, so
// batch buffers go back to the batcher's pool. GB/s is example bytes copied
// into batches over the wall time from Start() to the end of the stream;
// the best of --runs runs (default 3). Prints a table, then one JSON line
// (prefixed "JSON ").
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "google/protobuf/text_format.h"
#include "stages/generic/example.h"
#include "stages/stage_factory.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kFloatsPerExample = 256;
constexpr size_t kExampleBytes = kFloatsPerExample * sizeof(float);
constexpr size_t kBatchSize = 1024;

// Sends its examples (moved out) in order, then closes its output.
class PrebuiltSource final : public Stage {
 public:
  PrebuiltSource(const StageContext& context,
                 std::shared_ptr<std::vector<Example>> examples)
      : Stage(context),
        examples_(std::move(examples)),
        output_(AddOutput<Example>("output", 1024)) {}

  void Start(const StageRuntime& runtime) override {
    SpawnWorkers(runtime, 1, [this](int) { return Produce(); });
  }

 private:
  asio::awaitable<void> Produce() {
    for (Example& example : *examples_) {
      if (!co_await output_->Send(std::move(example), load_meter())) break;
    }
  }

  std::shared_ptr<std::vector<Example>> examples_;
  Channel<Example>* const output_;
};

std::vector<Example> BuildExamples(
    size_t count, const std::shared_ptr<const std::vector<float>>& block) {
  const size_t slots = block->size() / kFloatsPerExample;
  std::vector<Example> examples(count);
  for (size_t i = 0; i < count; ++i) {
    const float* values = block->data() + (i % slots) * kFloatsPerExample;
    examples[i].Set("x",
                    ExampleField::View(DType::kFloat32, {kFloatsPerExample},
                                       std::as_bytes(std::span<const float>(
                                           values, kFloatsPerExample)),
                                       block));
  }
  return examples;
}

DataLoaderConfig Config(unsigned threads) {
  DataLoaderConfig config;
  const std::string text =
      absl::StrCat("worker_threads: ", threads, R"pb(
                     stage {
                       name: "source"
                       counting_source {}
                     }
                     stage { name: "batcher" input: "source"
                             batcher { batch_size:)pb",
                   kBatchSize, R"pb(
            field { name: "x" dtype: "float32" shape: 256 }
          }
                    })pb");
  if (!google::protobuf::TextFormat::ParseFromString(text, &config)) {
    std::fprintf(stderr, "batcher_benchmark: bad config\n");
    std::exit(1);
  }
  return config;
}

// Seconds from Start() to the end of the stream, for `count` examples.
double RunOnce(unsigned threads, size_t count,
               const std::shared_ptr<const std::vector<float>>& block) {
  auto examples =
      std::make_shared<std::vector<Example>>(BuildExamples(count, block));
  DataLoader loader([examples](const StageContext& context)
                        -> absl::StatusOr<std::unique_ptr<Stage>> {
    if (context.name() == "source") {
      return std::unique_ptr<Stage>(new PrebuiltSource(context, examples));
    }
    return CreateStage(context);
  });
  loader.Configure(Config(threads));
  const auto start = Clock::now();
  loader.Start();
  size_t got = 0;
  float check = 0;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    got += batch->size();
    check += batch->tensor(0).As<float>()[kFloatsPerExample + 1];
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  loader.Stop();
  if (got != count || check != check) {
    std::fprintf(stderr, "batcher_benchmark: %zu of %zu examples\n", got,
                 count);
    std::exit(1);
  }
  return seconds;
}

int Main(int argc, char** argv) {
  size_t count = 262144;
  size_t block_mib = 64;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--examples") == 0 && i + 1 < argc) {
      count = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--block-mib") == 0 && i + 1 < argc) {
      block_mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: batcher_benchmark [--examples N] [--block-mib N] "
                   "[--runs N]\n");
      return 2;
    }
  }
  if (count == 0 || block_mib == 0 || runs < 1) {
    std::fprintf(stderr, "batcher_benchmark: arguments must be positive\n");
    return 2;
  }
  auto block = std::make_shared<std::vector<float>>(block_mib << 18);
  for (size_t i = 0; i < block->size(); ++i) (*block)[i] = float(i % 4093);
  const double gigabytes = double(count) * kExampleBytes / 1e9;
  std::printf("%zu examples of %zu bytes, batches of %zu, block %zu MiB\n",
              count, kExampleBytes, kBatchSize, block_mib);
  std::printf("%-8s %12s %14s %14s\n", "threads", "best s", "GB/s",
              "GB/s/thread");
  std::string json = "{";
  for (unsigned threads : {1u, 2u}) {
    double best = 1e30;
    for (int run = 0; run < runs; ++run) {
      best = std::min(best, RunOnce(threads, count, block));
    }
    const double rate = gigabytes / best;
    std::printf("%-8u %12.3f %14.2f %14.2f\n", threads, best, rate,
                rate / threads);
    absl::StrAppend(&json, threads == 1 ? "" : ",", "\"threads_", threads,
                    "\":{\"seconds\":", best, ",\"gb_per_s\":", rate,
                    ",\"gb_per_s_per_thread\":", rate / threads,
                    ",\"examples_per_s\":", count / best, "}");
  }
  json += "}";
  std::printf("JSON %s\n", json.c_str());
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
