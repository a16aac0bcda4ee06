#include "io/batch_file_meta.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sluice {
namespace {

using Json = nlohmann::json;

Json ValidMeta() {
  return Json::parse(R"({
    "dataset_name": "shakespeare_char", "training_type": "LM",
    "batch_size": 4, "block_size": 8, "vocab_size": 65,
    "batch_schema": [
      {"name": "x", "dtype": "I64", "shape": [8], "role": "input"},
      {"name": "y", "dtype": "I64", "shape": [8], "role": "target"}],
    "split_info": {"train": {}, "val": {}}, "stoi": {"a": 1}})");
}

TEST(DatasetMetaTest, ParsesAndRoundTrips) {
  absl::StatusOr<DatasetMeta> meta = ParseDatasetMeta(ValidMeta().dump());
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->dataset_name, "shakespeare_char");
  EXPECT_EQ(meta->batch_size, 4);
  EXPECT_EQ(meta->vocab_size, 65);
  EXPECT_FALSE(meta->target_size.has_value());
  ASSERT_EQ(meta->batch_schema.size(), 2u);
  EXPECT_EQ(meta->batch_schema[1].role, "target");
  absl::StatusOr<std::string> text = SerializeDatasetMeta(*meta);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<DatasetMeta> again = ParseDatasetMeta(*text);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->batch_schema, meta->batch_schema);
  EXPECT_EQ(again->block_size, 8);
}

TEST(DatasetMetaTest, EveryRequiredKeyIsNamedWhenMissing) {
  for (const char* key : {"dataset_name", "training_type", "batch_size",
                          "batch_schema", "split_info"}) {
    Json json = ValidMeta();
    json.erase(key);
    absl::StatusOr<DatasetMeta> meta = ParseDatasetMeta(json.dump());
    ASSERT_FALSE(meta.ok()) << key;
    EXPECT_NE(meta.status().message().find(absl::StrCat("'", key, "'")),
              std::string::npos)
        << meta.status();
  }
}

TEST(DatasetMetaTest, RejectsBadValues) {
  const std::vector<std::pair<std::string, Json>> cases = {
      {"training_type", "GAN"},
      {"batch_size", 0},
      {"batch_size", "4"},
      {"vocab_size", -1},
      {"split_info", Json::array()},
      {"batch_schema", Json::array()},
      {"batch_schema",
       Json::parse(R"([{"name":"x","dtype":"F32","shape":[1]}])")},
      {"batch_schema",
       Json::parse(R"([{"name":"x","dtype":"F99","shape":[1],"role":"r"}])")},
      {"batch_schema",
       Json::parse(R"([{"name":"x","dtype":"F32","shape":[1],"role":"r"},
                       {"name":"x","dtype":"F32","shape":[1],"role":"r"}])")},
  };
  for (const auto& [key, value] : cases) {
    Json json = ValidMeta();
    json[key] = value;
    EXPECT_FALSE(ParseDatasetMeta(json.dump()).ok()) << key << value;
  }
  EXPECT_FALSE(ParseDatasetMeta("{not json").ok());
}

TEST(DatasetMetaTest, SchemaMismatchNamesTheField) {
  absl::StatusOr<DatasetMeta> meta = ParseDatasetMeta(ValidMeta().dump());
  ASSERT_TRUE(meta.ok());
  std::vector<FieldSpec> other = meta->batch_schema;
  other[1].shape = {9};
  absl::Status status = CheckSameSchema(meta->batch_schema, other, "file");
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("'y'"), std::string::npos) << status;
  EXPECT_TRUE(CheckSameSchema(other, other, "file").ok());
}

TEST(BatchFileTest, HeaderRoundTripAndValidation) {
  const BatchFileInfo info{
      .batch_size = 2,
      .num_batches = 3,
      .sequence = 7,
      .split = "val",
      .produced_at_ms = 1234,
      .schema = {{"x", "I32", {4}, "input"}, {"y", "U8", {}, "target"}}};
  absl::StatusOr<std::string> header = EncodeBatchFileHeader(info);
  ASSERT_TRUE(header.ok()) << header.status();
  const std::string file = *header + std::string(6 * 4 * 4 + 6, '\0');
  absl::StatusOr<BatchFileLayout> layout = ParseBatchFile(file, file.size());
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->info.sequence, 7);
  EXPECT_EQ(layout->info.split, "val");
  EXPECT_EQ(layout->info.produced_at_ms, 1234);
  EXPECT_EQ(layout->info.schema, info.schema);
  ASSERT_EQ(layout->fields.size(), 2u);
  EXPECT_EQ(layout->fields[1].bytes, 6u);
  // A safetensors file without the batch metadata is not a batch file.
  absl::StatusOr<std::string> plain =
      EncodeSafetensorsHeader({{"x", "U8", {1}}}, {});
  const std::string bare = *plain + "x";
  EXPECT_TRUE(absl::IsDataLoss(ParseBatchFile(bare, bare.size()).status()));
}

}  // namespace
}  // namespace sluice
