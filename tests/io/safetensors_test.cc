#include "io/safetensors.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace sluice {
namespace {

// A file of two tensors (F32 [2,3], I64 [2]) with metadata, data filled.
std::string SampleFile() {
  absl::StatusOr<std::string> header = EncodeSafetensorsHeader(
      {{"x", "F32", {2, 3}}, {"y", "I64", {2}}}, {{"split", "train"}});
  EXPECT_TRUE(header.ok()) << header.status();
  return *header + std::string(24 + 16, '\x01');
}

TEST(SafetensorsTest, RoundTrip) {
  const std::string file = SampleFile();
  EXPECT_EQ((SafetensorsPrefixBytes(file)) % 8, 0u);
  absl::StatusOr<SafetensorsFile> parsed = ParseSafetensors(file, file.size());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->tensors.size(), 2u);
  EXPECT_EQ(parsed->tensors[0].spec.name, "x");
  EXPECT_EQ(parsed->tensors[0].spec.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(parsed->tensors[0].offset, SafetensorsPrefixBytes(file));
  EXPECT_EQ(parsed->tensors[0].bytes, 24u);
  EXPECT_EQ(parsed->tensors[1].spec.dtype, "I64");
  EXPECT_EQ(parsed->tensors[1].offset, SafetensorsPrefixBytes(file) + 24);
  EXPECT_EQ(parsed->metadata.at("split"), "train");
}

TEST(SafetensorsTest, EncodeRejectsBadSpecs) {
  EXPECT_FALSE(EncodeSafetensorsHeader({{"x", "F31", {1}}}, {}).ok());
  EXPECT_FALSE(EncodeSafetensorsHeader({{"x", "F32", {-1}}}, {}).ok());
  EXPECT_FALSE(
      EncodeSafetensorsHeader({{"x", "F32", {1}}, {"x", "F32", {1}}}, {}).ok());
  EXPECT_FALSE(EncodeSafetensorsHeader({{"__metadata__", "U8", {1}}}, {}).ok());
}

TEST(SafetensorsTest, TruncatedFileIsDataLoss) {
  const std::string file = SampleFile();
  for (size_t size : {size_t{0}, size_t{7}, size_t{20}, file.size() - 1}) {
    absl::StatusOr<SafetensorsFile> parsed =
        ParseSafetensors(file.substr(0, size), size);
    EXPECT_TRUE(absl::IsDataLoss(parsed.status())) << size;
  }
  // Extra bytes after the last tensor are a gap too.
  const std::string longer = file + "x";
  EXPECT_TRUE(
      absl::IsDataLoss(ParseSafetensors(longer, longer.size()).status()));
}

TEST(SafetensorsTest, HeaderLimit) {
  const std::string file = SampleFile();
  absl::StatusOr<SafetensorsFile> parsed =
      ParseSafetensors(file, file.size(), /*max_header_bytes=*/16);
  EXPECT_TRUE(absl::IsDataLoss(parsed.status()));
  EXPECT_NE(parsed.status().message().find("limit"), std::string::npos);
}

// Replaces the JSON header of a file by `json` (padded), keeping `data`.
std::string WithHeader(std::string json, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t length = json.size();
  std::memcpy(out.data(), &length, 8);
  return out + json + data;
}

TEST(SafetensorsTest, RejectsInconsistentHeaders) {
  const std::string data(8, '\0');
  for (const char* json : {
           R"([1,2])",
           R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})",
           R"({"x":{"dtype":"Q8","shape":[8],"data_offsets":[0,8]}})",
           R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",
           R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
           R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
           R"("y":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
           R"({"x":{"dtype":"F32","shape":[2]}})",
           R"({"__metadata__":{"a":1},)"
           R"("x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
           R"({"x":)",
       }) {
    const std::string file = WithHeader(json, data);
    EXPECT_TRUE(absl::IsDataLoss(ParseSafetensors(file, file.size()).status()))
        << json;
  }
  const std::string good = WithHeader(
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data);
  EXPECT_TRUE(ParseSafetensors(good, good.size()).ok());
}

}  // namespace
}  // namespace sluice
