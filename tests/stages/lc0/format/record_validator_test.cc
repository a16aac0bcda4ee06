#include "stages/lc0/format/record_validator.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace sluice::lc0 {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A valid V6 record of input format 1: four legal moves of 0.25 each.
V6TrainingRecord ValidRecord(uint32_t version = 6) {
  V6TrainingRecord rec;
  std::memset(&rec, 0, sizeof(rec));
  rec.version = version;
  rec.input_format = 1;
  for (float& p : rec.probabilities) p = -1.0f;
  for (int i = 0; i < 4; ++i) rec.probabilities[10 * i] = 0.25f;
  rec.best_q = -0.1f;
  rec.best_d = 0.4f;
  rec.plies_left = 30.0f;
  if (version == 6) {
    rec.result_q = 0.2f;
    rec.result_d = 0.3f;
    rec.orig_q = kNaN;  // allowed
    rec.orig_d = kNaN;
    rec.orig_m = kNaN;
  }
  return rec;
}

std::string Chunk(uint32_t version, size_t bytes) {
  std::string chunk(bytes, '\0');
  std::memcpy(chunk.data(), &version, std::min<size_t>(4, bytes));
  return chunk;
}

TEST(CheckChunkTest, AcceptsWholeRecords) {
  const ChunkCheck check = CheckChunk(Chunk(6, 2 * kV6RecordSize));
  EXPECT_FALSE(check.reject.has_value());
  EXPECT_EQ(check.version, RecordVersion::kV6);
  EXPECT_EQ(check.record_size, kV6RecordSize);
  EXPECT_EQ(check.record_count, 2u);
  EXPECT_EQ(CheckChunk(Chunk(3, 3 * kV3RecordSize)).record_count, 3u);
  const ChunkCheck v7 = CheckChunk(Chunk(7, 2 * kV7RecordSize));
  EXPECT_FALSE(v7.reject.has_value());
  EXPECT_EQ(v7.version, RecordVersion::kV7);
  EXPECT_EQ(v7.record_size, kV7RecordSize);
  // A V6-sized chunk that claims V7.
  EXPECT_EQ(CheckChunk(Chunk(7, kV6RecordSize)).reject,
            RejectReason::kSizeNotMultiple);
}

TEST(CheckChunkTest, ChunkLevelReasons) {
  EXPECT_EQ(CheckChunk("").reject, RejectReason::kEmptyChunk);
  EXPECT_EQ(CheckChunk("\x06\x00").reject, RejectReason::kSizeNotMultiple);
  EXPECT_EQ(CheckChunk(Chunk(8, kV7RecordSize)).reject,
            RejectReason::kUnknownVersion);
  EXPECT_EQ(CheckChunk(Chunk(6, kV6RecordSize + 1)).reject,
            RejectReason::kSizeNotMultiple);
  // A V5-sized chunk that claims V6.
  EXPECT_EQ(CheckChunk(Chunk(6, kV5RecordSize)).reject,
            RejectReason::kSizeNotMultiple);
}

TEST(CheckRecordTest, ValidRecordsPass) {
  EXPECT_EQ(CheckRecord(ValidRecord(), RecordVersion::kV6, 1), std::nullopt);
  EXPECT_EQ(CheckRecord(ValidRecord(5), RecordVersion::kV5, 1), std::nullopt);
}

TEST(CheckRecordTest, AllMarkerOrZeroProbabilitiesSkipTheSum) {
  V6TrainingRecord rec = ValidRecord();
  for (float& p : rec.probabilities) p = -1.0f;
  rec.probabilities[7] = 0.0f;
  EXPECT_EQ(CheckRecord(rec, RecordVersion::kV6, 1), std::nullopt);
}

TEST(CheckRecordTest, SumWithinTolerancePasses) {
  V6TrainingRecord rec = ValidRecord();
  rec.probabilities[0] = 0.2505f;
  EXPECT_EQ(CheckRecord(rec, RecordVersion::kV6, 1), std::nullopt);
}

TEST(CheckRecordTest, V6IgnoresTheInt8Result) {
  V6TrainingRecord rec = ValidRecord();
  rec.result = 5;
  EXPECT_EQ(CheckRecord(rec, RecordVersion::kV6, 1), std::nullopt);
}

struct ReasonCase {
  std::string name;  // the expected RejectReasonName
  uint32_t version;
  std::function<void(V6TrainingRecord&)> mutate;
};

class RecordReasonTest : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(RecordReasonTest, RejectsWithTheNamedReason) {
  const ReasonCase& c = GetParam();
  V6TrainingRecord rec = ValidRecord(c.version);
  c.mutate(rec);
  const auto chunk_version = static_cast<RecordVersion>(c.version);
  std::optional<RejectReason> reason = CheckRecord(rec, chunk_version, 1);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(RejectReasonName(*reason), c.name);
  EXPECT_FALSE(IsChunkLevel(*reason));
}

INSTANTIATE_TEST_SUITE_P(
    AllReasons, RecordReasonTest,
    ::testing::Values(
        ReasonCase{"version_mismatch", 6,
                   [](V6TrainingRecord& r) { r.version = 5; }},
        ReasonCase{"unexpected_input_format", 6,
                   [](V6TrainingRecord& r) { r.input_format = 3; }},
        ReasonCase{"nonfinite_probability", 6,
                   [](V6TrainingRecord& r) { r.probabilities[0] = kNaN; }},
        ReasonCase{"nonfinite_probability", 6,
                   [](V6TrainingRecord& r) { r.probabilities[5] = kInf; }},
        ReasonCase{"negative_probability", 6,
                   [](V6TrainingRecord& r) { r.probabilities[1] = -0.5f; }},
        ReasonCase{"probability_sum", 6,
                   [](V6TrainingRecord& r) { r.probabilities[0] = 0.3f; }},
        ReasonCase{"nan_field", 6,
                   [](V6TrainingRecord& r) { r.root_q = kNaN; }},
        ReasonCase{"nan_field", 6,
                   [](V6TrainingRecord& r) { r.policy_kld = kNaN; }},
        ReasonCase{"nan_field", 6,
                   [](V6TrainingRecord& r) { r.plies_left = kNaN; }},
        ReasonCase{"best_q_range", 6,
                   [](V6TrainingRecord& r) { r.best_q = 1.01f; }},
        ReasonCase{"result_q_range", 6,
                   [](V6TrainingRecord& r) { r.result_q = -1.5f; }},
        ReasonCase{"best_d_range", 6,
                   [](V6TrainingRecord& r) { r.best_d = -0.01f; }},
        ReasonCase{"result_d_range", 6,
                   [](V6TrainingRecord& r) { r.result_d = 1.2f; }},
        ReasonCase{"negative_plies_left", 6,
                   [](V6TrainingRecord& r) { r.plies_left = -1.0f; }},
        ReasonCase{"invalid_result", 5,
                   [](V6TrainingRecord& r) { r.result = 2; }},
        ReasonCase{"best_q_range", 4,
                   [](V6TrainingRecord& r) { r.best_q = kInf; }}),
    [](const ::testing::TestParamInfo<ReasonCase>& info) {
      return info.param.name + "_" + std::to_string(info.index);
    });

TEST(RejectReasonTest, ChunkLevelNames) {
  EXPECT_EQ(RejectReasonName(RejectReason::kEmptyChunk), "empty_chunk");
  EXPECT_EQ(RejectReasonName(RejectReason::kUnknownVersion), "unknown_version");
  EXPECT_EQ(RejectReasonName(RejectReason::kSizeNotMultiple),
            "size_not_multiple");
  EXPECT_TRUE(IsChunkLevel(RejectReason::kEmptyChunk));
  EXPECT_TRUE(IsChunkLevel(RejectReason::kUnknownVersion));
  EXPECT_TRUE(IsChunkLevel(RejectReason::kSizeNotMultiple));
}

}  // namespace
}  // namespace sluice::lc0
