#include "stages/lc0/format/packed_record.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "stages/lc0/format/data_generator.h"

namespace sluice::lc0 {
namespace {

// Packs and unpacks `record`; expects every byte back.
void ExpectRoundTrip(const V6TrainingRecord& record) {
  const PackedRecord packed = PackedRecord::Pack(record);
  auto out = std::make_unique<V6TrainingRecord>();
  std::memset(out.get(), 0x55, sizeof(*out));
  packed.Unpack(out.get());
  EXPECT_EQ(std::memcmp(out.get(), &record, sizeof(record)), 0);
  EXPECT_EQ(packed.version(), record.version);
  EXPECT_EQ(packed.input_format(), record.input_format);
}

TEST(PackedRecordTest, GeneratedGamesRoundTripInAboutAKilobyte) {
  const absl::StatusOr<std::string> game =
      GenerateGame({.seed = 3, .version = 6, .input_format = 1}, 0);
  ASSERT_TRUE(game.ok()) << game.status();
  ASSERT_EQ(game->size() % sizeof(V6TrainingRecord), 0u);
  auto record = std::make_unique<V6TrainingRecord>();
  for (size_t i = 0; i < game->size() / sizeof(V6TrainingRecord); ++i) {
    std::memcpy(record.get(), game->data() + i * sizeof(V6TrainingRecord),
                sizeof(V6TrainingRecord));
    ExpectRoundTrip(*record);
    EXPECT_LT(PackedRecord::Pack(*record).heap_bytes(), 1300u);
  }
}

TEST(PackedRecordTest, OddValuesAreKeptBitForBit) {
  auto record = std::make_unique<V6TrainingRecord>();
  std::mt19937 random(7);
  auto* bytes = reinterpret_cast<unsigned char*>(record.get());
  for (size_t i = 0; i < sizeof(*record); ++i) bytes[i] = random() & 0xff;
  for (float& p : record->probabilities) p = -1.0f;
  record->probabilities[0] = -0.0f;
  record->probabilities[1] = std::numeric_limits<float>::quiet_NaN();
  record->probabilities[2] = std::numeric_limits<float>::infinity();
  record->probabilities[kPolicySize - 1] = 0.25f;
  const uint32_t payload_nan = 0x7fc01234u;
  std::memcpy(&record->probabilities[3], &payload_nan, sizeof(payload_nan));
  ExpectRoundTrip(*record);
}

TEST(PackedRecordTest, AFullPolicyIsKeptWhole) {
  auto record = std::make_unique<V6TrainingRecord>();
  std::memset(record.get(), 0, sizeof(*record));
  for (size_t i = 0; i < kPolicySize; ++i) {
    record->probabilities[i] = static_cast<float>(i) / kPolicySize;
  }
  ExpectRoundTrip(*record);
  EXPECT_LE(PackedRecord::Pack(*record).heap_bytes(), sizeof(*record));
}

}  // namespace
}  // namespace sluice::lc0
