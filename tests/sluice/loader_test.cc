#include "sluice/loader.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "stages/lc0/format/data_generator.h"
#include "tests/testing/npz_reader.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh directory holding copies of the given golden chunks.
std::string GoldenDirectory(const std::string& name,
                            const std::vector<std::string>& fixtures) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("sluice_api_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const std::string& fixture : fixtures) {
    fs::copy_file("tests/data/golden/" + fixture + ".gz",
                  dir / (fixture + ".gz"));
  }
  return dir.string();
}

// proto/examples/lc0_{eval,train}.textproto reading `directory`.
DataLoaderConfig ExampleConfig(const std::string& name,
                               const std::string& directory) {
  std::ifstream file("proto/examples/" + name + ".textproto");
  std::stringstream text;
  text << file.rdbuf();
  DataLoaderConfig config;
  EXPECT_TRUE(
      google::protobuf::TextFormat::ParseFromString(text.str(), &config));
  for (StageConfig& stage : *config.mutable_stage()) {
    if (!stage.has_file_path_provider()) continue;
    stage.mutable_file_path_provider()->clear_directory();
    stage.mutable_file_path_provider()->add_directory(directory);
  }
  config.set_worker_threads(2);
  return config;
}

DataLoaderConfig EvalConfig(const std::string& directory, uint64_t batch_size) {
  DataLoaderConfig config = ExampleConfig("lc0_eval", directory);
  for (StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_tensor_generator()) {
      stage.mutable_tensor_generator()->set_batch_size(batch_size);
    }
  }
  return config;
}

// The planes rows of the golden fixture, as strings, sorted.
std::vector<std::string> GoldenPlaneRows(const std::string& fixture) {
  auto npz = testing::ReadNpz("tests/data/golden/" + fixture + ".npz");
  EXPECT_TRUE(npz.ok()) << npz.status();
  const testing::NpyArray& planes = npz->at("planes");
  const size_t row = planes.data.size() / planes.shape[0];
  std::vector<std::string> rows;
  for (int64_t i = 0; i < planes.shape[0]; ++i) {
    rows.push_back(planes.data.substr(i * row, row));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<std::string> PlaneRows(const Batch& batch) {
  const Tensor& planes = batch.tensor("planes");
  const size_t row = planes.bytes / batch.size();
  std::vector<std::string> rows;
  for (size_t i = 0; i < batch.size(); ++i) {
    rows.emplace_back(reinterpret_cast<const char*>(planes.data) + i * row,
                      row);
  }
  return rows;
}

TEST(LoaderTest, BatchOutlivesTheLoaderAndMatchesTheGoldenTensors) {
  std::optional<Batch> batch;
  {
    Loader loader(EvalConfig(GoldenDirectory("outlive", {"v6_fmt1_a"}), 64));
    loader.Start();
    batch = loader.Next();
    ASSERT_TRUE(batch.has_value());
    EXPECT_EQ(loader.Next(), std::nullopt);
  }  // the loader is gone; the batch's buffer is not
  ASSERT_EQ(batch->size(), 16u);
  EXPECT_EQ(batch->tensor("planes").shape,
            (std::vector<int64_t>{16, 112, 8, 8}));
  EXPECT_EQ(batch->tensor("probs").shape, (std::vector<int64_t>{16, 1858}));
  EXPECT_EQ(batch->tensor("winner").shape, (std::vector<int64_t>{16, 3}));
  EXPECT_EQ(batch->tensor("best_q").shape, (std::vector<int64_t>{16, 3}));
  EXPECT_EQ(batch->tensor("plies_left").shape, (std::vector<int64_t>{16}));
  std::vector<std::string> rows = PlaneRows(*batch);
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, GoldenPlaneRows("v6_fmt1_a"));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(batch->tensor("planes").data) % 64, 0u);
  EXPECT_THROW(batch->tensor("nope"), std::out_of_range);
  // The typed accessor checks the element type.
  EXPECT_EQ(batch->tensor("planes").data_as<float>(),
            batch->tensor("planes").data);
  EXPECT_THROW(batch->tensor("planes").data_as<int64_t>(),
               std::invalid_argument);
  EXPECT_EQ(batch->tensor("probs").elements(), 16u * 1858);
}

// A batch-file queue at `root` holding one file of two examples of three
// tensors of other dtypes than float32, written by hand (safetensors).
void WriteTypedQueue(const fs::path& root) {
  const std::string schema =
      R"([{"name":"label","dtype":"I64","shape":[],"role":"input"},)"
      R"({"name":"pixels","dtype":"U8","shape":[3],"role":"target"},)"
      R"({"name":"half","dtype":"F16","shape":[],"role":"target"}])";
  fs::create_directories(root / "queue" / "train");
  std::ofstream(root / "meta.json")
      << R"({"dataset_name":"typed","training_type":"CLASSIFICATION",)"
      << R"("batch_size":2,"split_info":{},"batch_schema":)" << schema << "}";
  std::string escaped;
  for (char c : schema) {
    if (c == '"') escaped += '\\';
    escaped += c;
  }
  std::string header =
      R"({"__metadata__":{"batch_size":"2","num_batches":"1","sequence":"1",)"
      R"("split":"train","produced_at":"1000","schema":")" +
      escaped +
      R"("},"label":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
      R"("pixels":{"dtype":"U8","shape":[2,3],"data_offsets":[16,22]},)"
      R"("half":{"dtype":"F16","shape":[2],"data_offsets":[22,26]}})";
  header.resize((header.size() + 7) / 8 * 8, ' ');
  std::string file(8, '\0');
  const uint64_t length = header.size();
  std::memcpy(file.data(), &length, 8);
  file += header;
  const int64_t labels[] = {-7, 1234567890123};
  file.append(reinterpret_cast<const char*>(labels), sizeof(labels));
  file += "abcdef";
  const uint16_t halves[] = {0x3c00, 0xc000};  // 1.0, -2.0
  file.append(reinterpret_cast<const char*>(halves), sizeof(halves));
  std::ofstream(root / "queue" / "train" / "1000-000001-1.safetensors",
                std::ios::binary)
      << file;
}

TEST(LoaderTest, BatchesOfAnyDtypeWithACheckedAccessor) {
  const fs::path root = fs::path(::testing::TempDir()) / "sluice_api_typed";
  fs::remove_all(root);
  WriteTypedQueue(root);
  Loader loader = Loader::FromText(
      "stage { name: 'reader' batch_file_reader { root: '" + root.string() +
      "' split: 'train' idle_timeout_ms: 200 } }");
  loader.Start();
  std::optional<Batch> batch = loader.Next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_FALSE(loader.Next().has_value());
  loader.Stop();
  EXPECT_EQ(batch->size(), 2u);
  const Tensor& label = batch->tensor("label");
  EXPECT_EQ(label.dtype, "int64");
  EXPECT_EQ(label.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(label.data_as<int64_t>()[1], 1234567890123);
  EXPECT_THROW(label.data_as<float>(), std::invalid_argument);
  const Tensor& pixels = batch->tensor("pixels");
  EXPECT_EQ(pixels.dtype, "uint8");
  EXPECT_EQ(pixels.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(pixels.elements(), 6u);
  EXPECT_EQ(pixels.data_as<uint8_t>()[5], 'f');
  const Tensor& half = batch->tensor("half");
  EXPECT_EQ(half.dtype, "float16");
  EXPECT_EQ(half.data_as<uint16_t>()[1], 0xc000);
}

TEST(LoaderTest, ConcurrentConsumersGetDisjointBatches) {
  const fs::path dir = fs::path(::testing::TempDir()) / "sluice_api_threads";
  fs::remove_all(dir);
  auto written = lc0::WriteGames({.seed = 3}, {.mode = lc0::OutputMode::kTar,
                                               .dir = dir.string(),
                                               .games = 30,
                                               .games_per_tar = 10});
  ASSERT_TRUE(written.ok()) << written.status();
  Loader loader(EvalConfig(dir.string(), 32));
  loader.Start();
  std::mutex mu;
  std::vector<Batch> batches;
  std::vector<std::thread> consumers;
  for (int i = 0; i < 4; ++i) {
    consumers.emplace_back([&] {
      while (std::optional<Batch> batch = loader.Next()) {
        std::lock_guard lock(mu);
        batches.push_back(std::move(*batch));
      }
    });
  }
  for (std::thread& consumer : consumers) consumer.join();
  uint64_t positions = 0;
  std::set<const void*> buffers;
  for (const Batch& batch : batches) {
    positions += batch.size();
    EXPECT_TRUE(buffers.insert(batch.buffer().get()).second);
  }
  EXPECT_EQ(positions, written->positions);
}

TEST(LoaderTest, StopWakesAConsumerBlockedInNext) {
  const std::string empty = GoldenDirectory("empty", {});
  Loader loader(ExampleConfig("lc0_train", empty));
  loader.Start();
  std::optional<Batch> got;
  std::thread consumer([&] { got = loader.Next(); });
  // The consumer blocks: watch mode on an empty directory never yields.
  loader.Stop();
  consumer.join();
  EXPECT_EQ(got, std::nullopt);
}

TEST(LoaderTest, NextForTimesOutThenDeliversEveryBatchThenEnds) {
  const std::string empty = GoldenDirectory("next_for_empty", {});
  Loader waiting(ExampleConfig("lc0_train", empty));
  waiting.Start();
  // Watch mode on an empty directory: nothing comes, the stream goes on.
  const NextResult nothing = waiting.NextFor(std::chrono::milliseconds(20));
  EXPECT_TRUE(nothing.timed_out);
  EXPECT_FALSE(nothing.batch.has_value());
  EXPECT_FALSE(nothing.end_of_stream());
  waiting.Stop();

  Loader loader(EvalConfig(GoldenDirectory("next_for", {"v6_fmt1_a"}), 4));
  loader.Start();
  size_t positions = 0;
  while (true) {
    NextResult next = loader.NextFor(std::chrono::milliseconds(5));
    if (next.end_of_stream()) break;
    if (next.timed_out) continue;
    ASSERT_TRUE(next.batch.has_value());
    positions += next.batch->size();
  }
  EXPECT_EQ(positions, 16u);
  EXPECT_TRUE(loader.NextFor(std::chrono::milliseconds(5)).end_of_stream());
}

TEST(LoaderTest, ErrorsAreTypedExceptions) {
  EXPECT_THROW(Loader::FromText("stage { name: \"x\" bogus: 1 }"), ConfigError);
  try {
    Loader::FromText("stage {\n name: \"x\"\n}\n");
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("stage 'x'"));
  }
  EXPECT_THROW(Loader::FromSerialized("\xff\xff\xff"), ConfigError);
  EXPECT_THROW(Loader::FromConfigFile("/nonexistent.textproto"), ConfigError);
  // Text-format configs are limited to 16 MiB (a comment one byte longer).
  try {
    Loader::FromText("#" + std::string(size_t{16} << 20, ' '));
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("larger than the limit"));
  }
  Loader counting =
      Loader::FromText("stage { name: \"n\" counting_source { count: 3 } }");
  counting.Start();
  EXPECT_THROW(counting.Next(), ConfigError);
}

TEST(LoaderTest, MetricsAndControlReachTheStages) {
  Loader loader(EvalConfig(GoldenDirectory("metrics", {"v6_fmt2"}), 8));
  loader.Start();
  while (loader.Next()) {
  }
  loader.Stop();
  const DataLoaderMetricsProto metrics = loader.Metrics();
  ASSERT_GT(metrics.total_stage_metrics_size(), 0);
  StageControlRequest request;
  request.mutable_chunk_pool_request()->set_reset_chunk_anchor(true);
  const std::vector<StageControlResponse> responses =
      loader.SendControlMessage(request);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].stage_name(), "pool");
}

}  // namespace
}  // namespace sluice
