#include "stages/lc0/format/record_upconvert.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sluice::lc0 {
namespace {

// A V6 record whose every byte is distinct-ish and non-zero.
V6TrainingRecord PatternRecord(uint32_t version) {
  V6TrainingRecord rec;
  auto* bytes = reinterpret_cast<uint8_t*>(&rec);
  for (size_t i = 0; i < sizeof(rec); ++i) bytes[i] = 1 + i % 251;
  rec.version = version;
  rec.input_format = 3;
  return rec;
}

// `rec` written in the on-disk layout of `version` (FORMAT.md's table).
std::string Serialize(const V6TrainingRecord& rec, RecordVersion version) {
  const char* bytes = reinterpret_cast<const char*>(&rec);
  switch (version) {
    case RecordVersion::kV6:
    case RecordVersion::kV5:
      return std::string(bytes, RecordSize(version));
    case RecordVersion::kV4:
    case RecordVersion::kV3:
      // Version, then everything from probabilities on (no input_format).
      return std::string(bytes, 4) +
             std::string(bytes + 8, RecordSize(version) - 4);
    case RecordVersion::kV7:  // written by the rescorer, never read here
      break;
  }
  return "";
}

TEST(DetectVersionTest, ReadsTheFirstFourBytes) {
  for (uint32_t v : {3u, 4u, 5u, 6u}) {
    std::string chunk(8, '\0');
    std::memcpy(chunk.data(), &v, 4);
    absl::StatusOr<RecordVersion> version = DetectVersion(chunk);
    ASSERT_TRUE(version.ok()) << version.status();
    EXPECT_EQ(static_cast<uint32_t>(*version), v);
  }
}

TEST(DetectVersionTest, RejectsUnknownAndShortInput) {
  std::string chunk(8, '\0');
  chunk[0] = 8;  // V3-V7 are known; 8 is not
  EXPECT_EQ(DetectVersion(chunk).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DetectVersion("\x06").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DetectVersion("").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RecordSizeTest, MatchesFormat) {
  EXPECT_EQ(RecordSize(RecordVersion::kV3), 8276u);
  EXPECT_EQ(RecordSize(RecordVersion::kV4), 8292u);
  EXPECT_EQ(RecordSize(RecordVersion::kV5), 8308u);
  EXPECT_EQ(RecordSize(RecordVersion::kV6), 8356u);
}

TEST(UpconvertTest, V6IsCopiedAsIs) {
  const V6TrainingRecord rec = PatternRecord(6);
  V6TrainingRecord out;
  UpconvertToV6(Serialize(rec, RecordVersion::kV6), RecordVersion::kV6, &out);
  EXPECT_EQ(std::memcmp(&rec, &out, sizeof(rec)), 0);
}

TEST(ViewAsV6Test, AV6RecordIsReadInPlace) {
  // At an odd offset: the packed layout needs no alignment.
  const std::string bytes =
      absl::StrCat(" ", Serialize(PatternRecord(6), RecordVersion::kV6));
  const std::string_view record = std::string_view(bytes).substr(1);
  V6TrainingRecord scratch;
  const V6TrainingRecord& view = ViewAsV6(record, RecordVersion::kV6, &scratch);
  EXPECT_EQ(reinterpret_cast<const char*>(&view), record.data());
  const uint16_t played_idx = view.played_idx;
  EXPECT_EQ(played_idx, PatternRecord(6).played_idx);
}

TEST(ViewAsV6Test, OlderRecordsAreUpconvertedIntoTheScratch) {
  for (const RecordVersion version :
       {RecordVersion::kV3, RecordVersion::kV4, RecordVersion::kV5}) {
    SCOPED_TRACE(static_cast<int>(version));
    const std::string record =
        Serialize(PatternRecord(static_cast<uint32_t>(version)), version);
    V6TrainingRecord scratch;
    V6TrainingRecord expected;
    UpconvertToV6(record, version, &expected);
    const V6TrainingRecord& view = ViewAsV6(record, version, &scratch);
    EXPECT_EQ(&view, &scratch);
    EXPECT_EQ(std::memcmp(&view, &expected, sizeof(expected)), 0);
  }
}

// For each older version: the fields it has land at their V6 offsets, the
// newer ones are zero, V3/V4 get input_format 1, the version is kept.
TEST(UpconvertTest, OlderVersionsLandAtV6Offsets) {
  struct Case {
    RecordVersion version;
    size_t kept_until;  // V6 offset where the version's fields end
  };
  for (const Case& c :
       {Case{RecordVersion::kV3, 8280}, Case{RecordVersion::kV4, 8296},
        Case{RecordVersion::kV5, 8308}}) {
    SCOPED_TRACE(static_cast<int>(c.version));
    const V6TrainingRecord rec =
        PatternRecord(static_cast<uint32_t>(c.version));
    V6TrainingRecord out;
    UpconvertToV6(Serialize(rec, c.version), c.version, &out);
    EXPECT_EQ(out.version, static_cast<uint32_t>(c.version));
    EXPECT_EQ(out.input_format, c.version == RecordVersion::kV5 ? 3u : 1u);
    const auto* want = reinterpret_cast<const uint8_t*>(&rec);
    const auto* got = reinterpret_cast<const uint8_t*>(&out);
    EXPECT_EQ(std::memcmp(want + 8, got + 8, c.kept_until - 8), 0);
    for (size_t i = c.kept_until; i < sizeof(out); ++i) {
      ASSERT_EQ(got[i], 0) << "byte " << i;
    }
  }
}

TEST(UpconvertTest, V4BestDFromItsOwnOffset) {
  // In a V4 record best_d sits at byte 8288; in V6 at 8292.
  std::string v4(kV4RecordSize, '\0');
  const uint32_t version = 4;
  const float best_d = 0.375f;
  std::memcpy(v4.data(), &version, 4);
  std::memcpy(v4.data() + 8288, &best_d, 4);
  V6TrainingRecord out;
  UpconvertToV6(v4, RecordVersion::kV4, &out);
  EXPECT_EQ(out.best_d, best_d);
  EXPECT_EQ(out.root_m, 0.0f);
}

}  // namespace
}  // namespace sluice::lc0
