#include "tests/stages/lc0/frame_test_util.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/lc0/format/tensor_batch.h"
#include "tests/testing/byte_hash.h"

namespace sluice::lc0::testing {

V6TrainingRecord Unpacked(const Frame& frame) {
  V6TrainingRecord record;
  frame.record.Unpack(&record);
  return record;
}

std::vector<Frame> LabelledFrames(uint64_t count) {
  std::vector<Frame> frames;
  frames.reserve(count);
  V6TrainingRecord record;
  std::memset(&record, 0, sizeof(record));
  for (uint64_t i = 0; i < count; ++i) {
    record.reserved = static_cast<uint32_t>(i);
    frames.push_back(Frame{PackedRecord::Pack(record), i});
  }
  return frames;
}

std::string RawGame(uint64_t game, int version, int input_format) {
  absl::StatusOr<std::string> raw = GenerateGame(
      {.seed = 11, .version = version, .input_format = input_format}, game);
  EXPECT_TRUE(raw.ok()) << raw.status();
  return raw.ok() ? *raw : std::string();
}

Chunk MakeChunk(const std::string& raw, uint64_t index) {
  absl::StatusOr<std::string> gz = GzipChunk(raw);
  EXPECT_TRUE(gz.ok()) << gz.status();
  Chunk chunk;
  chunk.source_name = "test";
  chunk.index_in_source = index;
  chunk.data = gz.ok() ? *gz : std::string();
  return chunk;
}

V6TrainingRecord GetRecord(const std::string& raw, size_t i) {
  V6TrainingRecord record;
  std::memcpy(&record, raw.data() + i * kV6RecordSize, kV6RecordSize);
  return record;
}

void SetRecord(std::string* raw, size_t i, const V6TrainingRecord& record) {
  std::memcpy(raw->data() + i * kV6RecordSize, &record, kV6RecordSize);
}

using ::sluice::testing::HashBytes;
using ::sluice::testing::kByteHashStart;

uint64_t PositionHash(const TensorBatch& batch, size_t slot) {
  uint64_t hash = kByteHashStart;
  hash = HashBytes(hash, batch.planes(slot), kInputPlanes * 64 * sizeof(float));
  hash = HashBytes(hash, batch.probs(slot), kPolicySize * sizeof(float));
  hash = HashBytes(hash, batch.winner(slot), 3 * sizeof(float));
  hash = HashBytes(hash, batch.best_q(slot), 3 * sizeof(float));
  hash = HashBytes(hash, batch.plies_left(slot), sizeof(float));
  return hash;
}

uint64_t PositionHash(const TypedBatch& batch, size_t slot) {
  uint64_t hash = kByteHashStart;
  for (const BatchTensor& tensor : batch.tensors()) {
    const size_t row = tensor.bytes / batch.size();
    hash = HashBytes(hash, static_cast<const char*>(tensor.data) + slot * row,
                     row);
  }
  return hash;
}

DataLoaderConfig ExampleConfig(const std::string& name,
                               const std::string& data_dir) {
  std::ifstream in("proto/examples/" + name + ".textproto");
  std::stringstream text;
  text << in.rdbuf();
  DataLoaderConfig config;
  EXPECT_TRUE(
      google::protobuf::TextFormat::ParseFromString(text.str(), &config))
      << name;
  for (StageConfig& stage : *config.mutable_stage()) {
    if (!stage.has_file_path_provider()) continue;
    stage.mutable_file_path_provider()->clear_directory();
    stage.mutable_file_path_provider()->add_directory(data_dir);
  }
  return config;
}

}  // namespace sluice::lc0::testing
