#include "stages/generic/batcher.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/data_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/stages/generic/example_source.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice {
namespace {

using ::sluice::testing::FactoryWithBlocks;
using ::sluice::testing::FactoryWithExamples;
using ::sluice::testing::IndexedExamples;
using ::sluice::testing::ParseConfig;
using ::sluice::testing::StageTotals;
using ::testing::HasSubstr;

// source -> batcher { `batcher_config` }.
std::string Config(const std::string& batcher_config) {
  return absl::StrCat(R"pb(
                        worker_threads: 2
                        stage {
                          name: "source"
                          counting_source {}
                        }
                        stage { name: "batcher" input: "source" batcher {)pb",
                      batcher_config, "} }");
}

std::vector<TypedBatch> Drain(DataLoader& loader) {
  std::vector<TypedBatch> batches;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    batches.push_back(std::move(*batch));
  }
  return batches;
}

std::vector<TypedBatch> RunBatcher(std::vector<Example> examples,
                                   const std::string& batcher_config,
                                   StageMetricProto* totals = nullptr) {
  DataLoader loader(FactoryWithExamples("source", std::move(examples)));
  loader.Configure(ParseConfig(Config(batcher_config)));
  loader.Start();
  std::vector<TypedBatch> batches = Drain(loader);
  loader.Stop();
  if (totals != nullptr) *totals = StageTotals(loader, "batcher");
  return batches;
}

std::map<std::string, uint64_t> SkippedByReason(const StageMetricProto& m) {
  std::map<std::string, uint64_t> skipped;
  for (const SkipCountProto& skip : m.skipped()) {
    skipped[skip.reason()] += skip.count();
  }
  return skipped;
}

// The bytes of `tensor`.
std::string Bytes(const BatchTensor& tensor) {
  return std::string(static_cast<const char*>(tensor.data), tensor.bytes);
}

template <typename T>
std::string BytesOf(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()),
                     values.size() * sizeof(T));
}

// The int64 "index" of every example of `batch`.
std::vector<int64_t> Indices(const TypedBatch& batch) {
  const BatchTensor* index = batch.Find("index");
  EXPECT_NE(index, nullptr);
  if (index == nullptr) return {};
  EXPECT_EQ(index->shape, std::vector<int64_t>{int64_t(batch.size())});
  const int64_t* data = index->As<int64_t>();
  return std::vector<int64_t>(data, data + batch.size());
}

// Example i with one field of every dtype (and a view, and a field the
// schema leaves out), in an order other than the schema's.
Example EveryDType(int i, const std::shared_ptr<const std::string>& block) {
  Example example;
  example.Set("f32",
              ExampleField::Owned<float>({2, 3}, {i + 0.f, i + .1f, i + .2f,
                                                  i + .3f, i + .4f, i + .5f}));
  example.Set("f64", ExampleField::Scalar<double>(i + 0.25));
  const std::vector<uint16_t> half = {uint16_t(i), uint16_t(i + 100),
                                      uint16_t(0x3c00), uint16_t(0xfbff)};
  example.Set("f16", ExampleField::OwnedBytes(
                         DType::kFloat16, {4},
                         std::as_bytes(std::span<const uint16_t>(half))));
  example.Set("i64", ExampleField::Scalar<int64_t>(-1000000000000LL * i));
  example.Set("i32", ExampleField::Owned<int32_t>({2}, {i, -i}));
  example.Set("extra", ExampleField::Scalar<int64_t>(99));
  example.Set("i16", ExampleField::Scalar<int16_t>(int16_t(-3 * i)));
  example.Set("i8", ExampleField::Owned<int8_t>(
                        {3}, {int8_t(i), int8_t(-i), int8_t(i + 1)}));
  example.Set(
      "u8", ExampleField::Owned<uint8_t>({2, 2}, {uint8_t(i), uint8_t(i + 1),
                                                  uint8_t(200), uint8_t(255)}));
  example.Set("b", ExampleField::Scalar<bool>(i % 3 == 0));
  example.Set("view", ExampleField::View(DType::kUInt8, {5},
                                         std::as_bytes(std::span<const char>(
                                             block->data() + (i % 4), 5)),
                                         block));
  return example;
}

constexpr char kEveryDTypeSchema[] = R"pb(
  field { name: "b" dtype: "bool" }
  field {
    name: "f32"
    dtype: "float32"
    shape: [ 2, 3 ]
  }
  field { name: "f64" dtype: "float64" }
  field { name: "f16" dtype: "float16" shape: 4 }
  field { name: "i64" dtype: "int64" }
  field { name: "i32" dtype: "int32" shape: 2 }
  field { name: "i16" dtype: "int16" }
  field { name: "i8" dtype: "int8" shape: 3 }
  field {
    name: "u8"
    dtype: "uint8"
    shape: [ 2, 2 ]
  }
  field { name: "view" dtype: "uint8" shape: 5 }
)pb";

TEST(BatcherTest, EveryDTypeAndMultiDimShapeInTheRightBytes) {
  const auto block = std::make_shared<const std::string>("abcdefghij");
  std::vector<Example> examples;
  for (int i = 0; i < 8; ++i) examples.push_back(EveryDType(i, block));
  const std::vector<TypedBatch> batches =
      RunBatcher(examples, absl::StrCat("batch_size: 4 ", kEveryDTypeSchema));
  ASSERT_EQ(batches.size(), 2u);
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"b", {4}},        {"f32", {4, 2, 3}}, {"f64", {4}}, {"f16", {4, 4}},
      {"i64", {4}},      {"i32", {4, 2}},    {"i16", {4}}, {"i8", {4, 3}},
      {"u8", {4, 2, 2}}, {"view", {4, 5}}};
  const std::vector<DType> dtypes = {
      DType::kBool,  DType::kFloat32, DType::kFloat64, DType::kFloat16,
      DType::kInt64, DType::kInt32,   DType::kInt16,   DType::kInt8,
      DType::kUInt8, DType::kUInt8};
  for (size_t b = 0; b < batches.size(); ++b) {
    const TypedBatch& batch = batches[b];
    EXPECT_EQ(batch.size(), 4u);
    ASSERT_EQ(batch.tensors().size(), expected.size());  // no "extra"
    EXPECT_EQ(batch.Find("extra"), nullptr);
    for (size_t t = 0; t < expected.size(); ++t) {
      const BatchTensor& tensor = batch.tensor(t);
      SCOPED_TRACE(tensor.name);
      EXPECT_EQ(tensor.name, expected[t].first);
      EXPECT_EQ(tensor.shape, expected[t].second);
      EXPECT_EQ(tensor.dtype, dtypes[t]);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.data) % 64, 0u);
      std::string want;
      for (int i = 4 * b; i < 4 * int(b) + 4; ++i) {
        const ExampleField* field = examples[i].Find(tensor.name);
        ASSERT_NE(field, nullptr);
        want.append(reinterpret_cast<const char*>(field->bytes().data()),
                    field->bytes().size());
      }
      EXPECT_EQ(Bytes(tensor), want);
    }
  }
  // Spot checks against values written out by hand.
  const TypedBatch& second = batches[1];
  EXPECT_EQ(second.Find("f32")->As<float>()[6 + 5], 5.5f);  // example 5
  EXPECT_EQ(second.Find("i64")->As<int64_t>()[3], -7000000000000LL);
  EXPECT_EQ(Bytes(*second.Find("view")), "abcdebcdefcdefgdefgh");
  EXPECT_EQ(BytesOf(std::vector<uint8_t>(second.Find("b")->As<uint8_t>(),
                                         second.Find("b")->As<uint8_t>() + 4)),
            BytesOf(std::vector<uint8_t>{0, 0, 1, 0}));  // 4..7: 6 % 3 == 0
}

// Examples with x: float32 [2] and y: int64, where example `bad` is broken
// by `breaker`.
std::vector<Example> XyExamples(int count) {
  std::vector<Example> examples(count);
  for (int i = 0; i < count; ++i) {
    examples[i].Set("x", ExampleField::Owned<float>({2}, {i + 0.f, -i + 0.f}));
    examples[i].Set("y", ExampleField::Scalar<int64_t>(i));
  }
  return examples;
}

constexpr char kXySchema[] = R"pb(
  field { name: "x" dtype: "float32" shape: 2 }
  field { name: "y" dtype: "int64" }
)pb";

TEST(BatcherTest, BadExamplesAreSkippedCountedAndLoggedByReason) {
  const float three[] = {1, 2, 3};
  const float one[] = {1};
  const struct {
    std::string reason;
    ExampleField field;
    std::vector<std::string> logged;
  } cases[] = {
      {"missing_field", ExampleField(), {"field 'x'", "is missing", "[y]"}},
      {"wrong_dtype",
       ExampleField::Owned<int32_t>({2}, {1, 2}),
       {"field 'x'", "has dtype int32, expected float32"}},
      {"wrong_shape",
       ExampleField::OwnedBytes(DType::kFloat32, {3},
                                std::as_bytes(std::span(three))),
       {"field 'x'", "has shape [3], expected [2]"}},
      {"wrong_size",
       ExampleField::OwnedBytes(DType::kFloat32, {2},
                                std::as_bytes(std::span(one))),
       {"field 'x'", "holds 4 bytes, expected 8"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.reason);
    std::vector<Example> examples = XyExamples(5);
    if (c.reason == "missing_field") {
      examples[2].Remove("x");
    } else {
      examples[2].Set("x", c.field);
    }
    StageMetricProto totals;
    ::testing::internal::CaptureStderr();
    const std::vector<TypedBatch> batches = RunBatcher(
        examples, absl::StrCat("batch_size: 2 ", kXySchema), &totals);
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(SkippedByReason(totals),
              (std::map<std::string, uint64_t>{{c.reason, 1}}));
    EXPECT_THAT(log, HasSubstr("stage 'batcher'"));
    EXPECT_THAT(log, HasSubstr(c.reason));
    for (const std::string& part : c.logged) EXPECT_THAT(log, HasSubstr(part));
    // The other four, in order: batches [0, 1] and [3, 4].
    ASSERT_EQ(batches.size(), 2u);
    const int64_t* y0 = batches[0].Find("y")->As<int64_t>();
    const int64_t* y1 = batches[1].Find("y")->As<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(y0, y0 + 2), (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(std::vector<int64_t>(y1, y1 + 2), (std::vector<int64_t>{3, 4}));
    const float* x1 = batches[1].Find("x")->As<float>();
    EXPECT_EQ(std::vector<float>(x1, x1 + 4),
              (std::vector<float>{3, -3, 4, -4}));
  }
}

TEST(BatcherTest, LastBatchKeepDropAndPadRepeat) {
  const std::string schema = R"pb(field { name: "index" dtype: "int64" })pb";
  const auto run = [&](uint64_t count, const std::string& mode,
                       StageMetricProto* totals) {
    std::vector<std::vector<int64_t>> indices;
    for (const TypedBatch& batch : RunBatcher(
             IndexedExamples(count),
             absl::StrCat("batch_size: 4 last_batch: ", mode, " ", schema),
             totals)) {
      indices.push_back(Indices(batch));
    }
    return indices;
  };
  using Batches = std::vector<std::vector<int64_t>>;
  StageMetricProto totals;
  EXPECT_EQ(run(10, "KEEP", &totals),
            (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  EXPECT_EQ(totals.batcher().batches(), 3u);
  EXPECT_EQ(totals.batcher().examples(), 10u);
  EXPECT_EQ(run(10, "DROP", &totals), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(totals.batcher().examples(), 8u);
  EXPECT_EQ(totals.batcher().dropped_examples(), 2u);
  EXPECT_EQ(run(10, "PAD_REPEAT", &totals),
            (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 8, 9}}));
  EXPECT_EQ(totals.batcher().examples(), 12u);
  EXPECT_EQ(totals.batcher().padded_examples(), 2u);
  EXPECT_EQ(run(9, "PAD_REPEAT", &totals),
            (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 8, 8, 8}}));
  EXPECT_EQ(totals.batcher().padded_examples(), 3u);
  EXPECT_EQ(run(7, "PAD_REPEAT", nullptr),
            (Batches{{0, 1, 2, 3}, {4, 5, 6, 4}}));
  // No remainder: nothing extra, whatever the mode.
  for (const char* mode : {"KEEP", "DROP", "PAD_REPEAT"}) {
    EXPECT_EQ(run(8, mode, &totals), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}}))
        << mode;
    EXPECT_EQ(totals.batcher().padded_examples(), 0u);
    EXPECT_EQ(totals.batcher().dropped_examples(), 0u);
  }
  EXPECT_EQ(run(0, "PAD_REPEAT", nullptr), Batches{});
}

TEST(BatcherTest, BatchBuffersAreRecycled) {
  std::shared_ptr<BatchBufferPool> pool;
  size_t output_capacity = 0;
  DataLoader loader([&pool, &output_capacity](const StageContext& context)
                        -> absl::StatusOr<std::unique_ptr<Stage>> {
    if (context.name() == "source") {
      return FactoryWithExamples("source", XyExamples(400))(context);
    }
    absl::StatusOr<std::unique_ptr<Stage>> stage = CreateStage(context);
    if (stage.ok() && context.name() == "batcher") {
      pool = static_cast<Batcher*>(stage->get())->buffer_pool();
      output_capacity = (*stage)->GetOutput("output")->capacity();
    }
    return stage;
  });
  loader.Configure(
      ParseConfig(Config(absl::StrCat("batch_size: 4 ", kXySchema))));
  ASSERT_NE(pool, nullptr);
  loader.Start();
  uint64_t batches = 0;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    ++batches;
  }
  loader.Stop();
  EXPECT_EQ(batches, 100u);
  // Every buffer came back, and few were ever allocated: at most the output
  // channel's, one held by a blocked send, one by the consumer and one
  // being filled.
  EXPECT_GT(pool->allocated_buffers(), 0u);
  EXPECT_LE(pool->allocated_buffers(), output_capacity + 3);
  EXPECT_EQ(pool->free_buffers(), pool->allocated_buffers());
  EXPECT_EQ(StageTotals(loader, "batcher").batcher().batch_buffer_bytes(),
            pool->allocated_buffers() * pool->bytes());
}

// Examples `first`.. of XyExamples as one block, column by column ("x"
// float32 [2] = {i, -i}, "y" int64 = i, as XyExamples), its memory in
// one shared buffer; `x_size` other than 2 makes a block of the wrong
// shape.
ExampleBlock XyBlock(int first, int rows, int x_size = 2) {
  auto memory = std::make_shared<std::vector<int64_t>>(rows * (x_size + 1));
  float* x = reinterpret_cast<float*>(memory->data());
  int64_t* y = memory->data() + rows * x_size;
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < x_size; ++k) {
      x[r * x_size + k] = k % 2 == 0 ? float(first + r) : float(-(first + r));
    }
    y[r] = first + r;
  }
  std::vector<BlockColumn> columns = {
      {.name = "x",
       .dtype = DType::kFloat32,
       .example_shape = {x_size},
       .example_bytes = x_size * sizeof(float),
       .data = reinterpret_cast<const std::byte*>(x)},
      {.name = "y",
       .dtype = DType::kInt64,
       .example_bytes = sizeof(int64_t),
       .data = reinterpret_cast<const std::byte*>(y)}};
  return ExampleBlock(rows, std::move(columns), std::move(memory));
}

std::vector<TypedBatch> RunBlockBatcher(std::vector<ExampleBlock> blocks,
                                        const std::string& batcher_config,
                                        StageMetricProto* totals = nullptr) {
  DataLoader loader(FactoryWithBlocks("source", std::move(blocks)));
  loader.Configure(ParseConfig(Config(batcher_config)));
  loader.Start();
  std::vector<TypedBatch> batches = Drain(loader);
  loader.Stop();
  if (totals != nullptr) *totals = StageTotals(loader, "batcher");
  return batches;
}

TEST(BatcherBlockTest, BlocksGiveTheBatchesTheirExamplesWouldGive) {
  // 23 examples in blocks of 5, 1, 8 and 9.
  const std::vector<std::pair<int, int>> runs = {
      {0, 5}, {5, 1}, {6, 8}, {14, 9}};
  for (int batch_size : {1, 3, 4, 8, 30}) {
    for (const char* last : {"KEEP", "DROP", "PAD_REPEAT"}) {
      const std::string config = absl::StrCat(
          "batch_size: ", batch_size, " last_batch: ", last, " ", kXySchema);
      std::vector<ExampleBlock> blocks;
      for (const auto& [first, rows] : runs) {
        blocks.push_back(XyBlock(first, rows));
      }
      StageMetricProto block_totals, example_totals;
      const std::vector<TypedBatch> from_blocks =
          RunBlockBatcher(blocks, config, &block_totals);
      const std::vector<TypedBatch> from_examples =
          RunBatcher(XyExamples(23), config, &example_totals);
      ASSERT_EQ(from_blocks.size(), from_examples.size())
          << batch_size << " " << last;
      for (size_t b = 0; b < from_blocks.size(); ++b) {
        ASSERT_EQ(from_blocks[b].size(), from_examples[b].size());
        for (size_t t = 0; t < 2; ++t) {
          EXPECT_EQ(from_blocks[b].tensor(t).shape,
                    from_examples[b].tensor(t).shape);
          EXPECT_EQ(Bytes(from_blocks[b].tensor(t)),
                    Bytes(from_examples[b].tensor(t)))
              << "batch " << b << " tensor " << t << " size " << batch_size
              << " " << last;
        }
      }
      EXPECT_EQ(block_totals.batcher().examples(),
                example_totals.batcher().examples());
      EXPECT_EQ(block_totals.batcher().padded_examples(),
                example_totals.batcher().padded_examples());
      EXPECT_EQ(block_totals.batcher().dropped_examples(),
                example_totals.batcher().dropped_examples());
    }
  }
}

TEST(BatcherBlockTest, BatchesInsideOneBlockAreViewsThatKeepItAlive) {
  const std::byte* x = nullptr;
  std::vector<TypedBatch> batches;
  {
    ExampleBlock block = XyBlock(0, 9);
    x = block.Find("x")->data;
    batches = RunBlockBatcher(
        {std::move(block), XyBlock(9, 3)},
        absl::StrCat("batch_size: 4 last_batch: KEEP ", kXySchema));
  }
  ASSERT_EQ(batches.size(), 3u);
  // Rows 0-3 and 4-7 lie inside the first block: no copy.
  EXPECT_EQ(batches[0].tensor(0).data, x);
  EXPECT_EQ(batches[1].tensor(0).data, x + 4 * 2 * sizeof(float));
  // Rows 8-11 span both blocks: copied into a batch buffer of its own.
  EXPECT_NE(batches[2].tensor(0).data, x + 8 * 2 * sizeof(float));
  EXPECT_EQ(Bytes(batches[2].tensor(1)),
            BytesOf(std::vector<int64_t>{8, 9, 10, 11}));
  // The pipeline and the test's block are gone: the views alone keep the
  // block's memory (ASan would catch a read of freed memory).
  const TypedBatch kept = batches[1];
  batches.clear();
  EXPECT_EQ(Bytes(kept.tensor(1)), BytesOf(std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(Bytes(kept.tensor(0)),
            BytesOf(std::vector<float>{4, -4, 5, -5, 6, -6, 7, -7}));
}

// The y values (row numbers) of a batch.
std::vector<int64_t> RowsOf(const TypedBatch& batch) {
  const BatchTensor& y = batch.tensor(1);
  const auto* data = static_cast<const int64_t*>(y.data);
  return std::vector<int64_t>(data, data + batch.size());
}

TEST(BatcherBlockTest, ViewsFirstTakesEveryBatchThatFitsABlockAsAView) {
  // A short block of 3 rows, then blocks of 4; batches of 4 (as a file's
  // short last record batch before the next file's full ones). In order,
  // every batch spans two blocks and is copied. Views first, every full
  // block is a batch of its own, a view; the short block's rows leave last.
  const std::vector<std::pair<int, int>> runs = {
      {0, 3}, {3, 4}, {7, 4}, {11, 4}};
  for (const bool views_first : {false, true}) {
    std::vector<const std::byte*> x;
    std::vector<TypedBatch> batches;
    {
      std::vector<ExampleBlock> blocks;
      for (const auto& [first, rows] : runs) {
        blocks.push_back(XyBlock(first, rows));
        x.push_back(blocks.back().Find("x")->data);
      }
      batches = RunBlockBatcher(
          std::move(blocks),
          absl::StrCat("batch_size: 4 last_batch: KEEP ",
                       views_first ? "block_order: VIEWS_FIRST " : "",
                       kXySchema));
    }
    ASSERT_EQ(batches.size(), 4u);
    if (!views_first) {
      for (int b = 0; b < 4; ++b) {
        EXPECT_EQ(RowsOf(batches[b]).front(), 4 * b);
        EXPECT_EQ(std::count(x.begin(), x.end(), batches[b].tensor(0).data), 0);
      }
      continue;
    }
    for (int b = 0; b < 3; ++b) {
      EXPECT_EQ(batches[b].tensor(0).data, x[b + 1]) << b;
      EXPECT_EQ(RowsOf(batches[b]).front(), 3 + 4 * b);
    }
    EXPECT_EQ(RowsOf(batches[3]), (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(Bytes(batches[3].tensor(0)),
              BytesOf(std::vector<float>{0, 0, 1, -1, 2, -2}));
  }
}

TEST(BatcherBlockTest, ViewsFirstDeliversEveryRowExactlyOnce) {
  // Blocks of 5, 1, 8 and 9 rows (23 in all), every batch size and last
  // batch rule: the rows of the batches are 0..22 once each (padding
  // repeats a batch's own rows), and the counts equal in-order's.
  const std::vector<std::pair<int, int>> runs = {
      {0, 5}, {5, 1}, {6, 8}, {14, 9}};
  for (int batch_size : {1, 3, 4, 8, 30}) {
    for (const char* last : {"KEEP", "DROP", "PAD_REPEAT"}) {
      std::vector<ExampleBlock> blocks, same_blocks;
      for (const auto& [first, rows] : runs) {
        blocks.push_back(XyBlock(first, rows));
        same_blocks.push_back(XyBlock(first, rows));
      }
      StageMetricProto views_first, in_order;
      const std::vector<TypedBatch> batches = RunBlockBatcher(
          std::move(blocks),
          absl::StrCat("batch_size: ", batch_size, " last_batch: ", last,
                       " block_order: VIEWS_FIRST ", kXySchema),
          &views_first);
      RunBlockBatcher(std::move(same_blocks),
                      absl::StrCat("batch_size: ", batch_size,
                                   " last_batch: ", last, " ", kXySchema),
                      &in_order);
      std::vector<int64_t> rows;
      for (const TypedBatch& batch : batches) {
        const std::vector<int64_t> batch_rows = RowsOf(batch);
        const size_t real =
            std::string(last) == "PAD_REPEAT" && &batch == &batches.back()
                ? batch_rows.size() - in_order.batcher().padded_examples()
                : batch_rows.size();
        rows.insert(rows.end(), batch_rows.begin(), batch_rows.begin() + real);
      }
      std::sort(rows.begin(), rows.end());
      const int64_t dropped = in_order.batcher().dropped_examples();
      std::vector<int64_t> expected;
      for (int64_t r = 0; r < 23; ++r) expected.push_back(r);
      if (dropped > 0) {
        // DROP keeps 23 - dropped rows: which ones depends on the order.
        ASSERT_EQ(rows.size(), 23u - dropped) << batch_size << " " << last;
        EXPECT_TRUE(std::includes(expected.begin(), expected.end(),
                                  rows.begin(), rows.end()));
        EXPECT_EQ(std::adjacent_find(rows.begin(), rows.end()), rows.end());
      } else {
        EXPECT_EQ(rows, expected) << batch_size << " " << last;
      }
      EXPECT_EQ(views_first.batcher().examples(),
                in_order.batcher().examples());
      EXPECT_EQ(views_first.batcher().padded_examples(),
                in_order.batcher().padded_examples());
      EXPECT_EQ(views_first.batcher().dropped_examples(), dropped);
    }
  }
}

TEST(BatcherBlockTest, AMismatchedBlockSkipsAndCountsEveryRow) {
  StageMetricProto totals;
  const std::vector<TypedBatch> batches = RunBlockBatcher(
      {XyBlock(0, 3), XyBlock(3, 5, /*x_size=*/3), XyBlock(8, 2)},
      absl::StrCat("batch_size: 5 last_batch: KEEP ", kXySchema), &totals);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(Bytes(batches[0].tensor(1)),
            BytesOf(std::vector<int64_t>{0, 1, 2, 8, 9}));
  EXPECT_EQ(SkippedByReason(totals),
            (std::map<std::string, uint64_t>{{"wrong_shape", 5}}));
}

// The output channel's capacity when the batcher's batches have
// `example_floats` float32 values per example and `batch_size` examples.
size_t OutputCapacity(int64_t example_floats, int batch_size) {
  size_t capacity = 0;
  DataLoader loader([&capacity](const StageContext& context)
                        -> absl::StatusOr<std::unique_ptr<Stage>> {
    if (context.name() == "source") {
      return FactoryWithExamples("source", {})(context);
    }
    absl::StatusOr<std::unique_ptr<Stage>> stage = CreateStage(context);
    if (stage.ok()) capacity = (*stage)->GetOutput("output")->capacity();
    return stage;
  });
  loader.Configure(ParseConfig(Config(absl::StrCat(
      "batch_size: ", batch_size,
      " field { name: 'x' dtype: 'float32' shape: [", example_floats, "] }"))));
  return capacity;
}

TEST(BatcherTest, OutputHoldsEightMiBOfBatchesFourToEightOfThem) {
  EXPECT_EQ(OutputCapacity(2, 4), 8u);            // 32 bytes
  EXPECT_EQ(OutputCapacity(256, 1024), 8u);       // 1 MiB
  EXPECT_EQ(OutputCapacity(512, 1024), 4u);       // 2 MiB
  EXPECT_EQ(OutputCapacity(80 * 3000, 256), 4u);  // 234 MiB
}

TEST(BatcherTest, ConfigErrorsNameStageAndField) {
  const struct {
    std::string config;
    std::vector<std::string> parts;
  } cases[] = {
      {absl::StrCat("batch_size: 0 ", kXySchema), {"batcher.batch_size"}},
      {"batch_size: 4", {"batcher.field'", "at least one"}},
      {R"pb(field { name: "x" dtype: "flaot32" })pb",
       {"batcher.field[0].dtype", "'x'", "'flaot32'", "float32"}},
      {R"pb(field { name: "x" dtype: "float32" }
            field {
              name: "y"
              dtype: "int8"
              shape: [ 2, -1 ]
            })pb",
       {"batcher.field[1].shape", "'y'", "-1"}},
      {R"pb(field { name: "x" dtype: "float32" }
            field { name: "x" dtype: "int8" })pb",
       {"batcher.field[1].name", "'x'", "field[0]"}},
      {R"pb(field { dtype: "int8" })pb", {"batcher.field[0].name", "empty"}},
      {R"pb(field {
              name: "x"
              dtype: "float64"
              shape: [ 1000000, 1000000 ]
            })pb",
       {"batcher.field[0].shape", "'x'", "larger"}},
      {absl::StrCat("block_order: VIEWS_FIRST ", kXySchema),
       {"batcher.block_order", "ROW_BLOCKS", "Examples"}},
  };
  for (const auto& c : cases) {
    DataLoader loader(FactoryWithExamples("source", {}));
    try {
      loader.Configure(ParseConfig(Config(c.config)));
      ADD_FAILURE() << "accepted " << c.config;
    } catch (const ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr("stage 'batcher'")) << c.config;
      for (const std::string& part : c.parts) {
        EXPECT_THAT(error.what(), HasSubstr(part)) << c.config;
      }
    }
  }
}

}  // namespace
}  // namespace sluice
