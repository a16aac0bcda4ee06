#include "stages/lc0/format/packed_expander.h"

#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "stages/lc0/format/data_generator.h"

namespace sluice::lc0 {
namespace {

// The records of a generated game, then two odd ones: random bytes with a
// sparse policy of odd values, and a full policy (kept whole when packed).
std::vector<V6TrainingRecord> VariedRecords() {
  const absl::StatusOr<std::string> game =
      GenerateGame({.seed = 5, .version = 6, .input_format = 1}, 0);
  EXPECT_TRUE(game.ok()) << game.status();
  std::vector<V6TrainingRecord> records(game->size() / kV6RecordSize);
  std::memcpy(records.data(), game->data(), records.size() * kV6RecordSize);

  V6TrainingRecord odd;
  std::mt19937 random(11);
  auto* bytes = reinterpret_cast<unsigned char*>(&odd);
  for (size_t i = 0; i < sizeof(odd); ++i) bytes[i] = random() & 0xff;
  for (int i = 0; i < kPolicySize; ++i) odd.probabilities[i] = -1.0f;
  odd.probabilities[0] = -0.0f;
  odd.probabilities[1] = std::numeric_limits<float>::quiet_NaN();
  odd.probabilities[kPolicySize - 1] = 0.5f;
  odd.version = 6;
  records.push_back(odd);

  V6TrainingRecord full = records.front();
  for (int i = 0; i < kPolicySize; ++i) {
    full.probabilities[i] = static_cast<float>(i) / kPolicySize;
  }
  records.push_back(full);
  return records;
}

// Expands every record, packed, with one expander in turn, into a batch
// (every slot alignment of the probs rows), twice over (so that a record
// after the full policy sees the markers restored); each slot must be bit
// for bit what the unpacked record expands to.
TEST(PackedExpanderTest, MatchesUnpackThenExpandBitForBit) {
  const std::vector<V6TrainingRecord> records = VariedRecords();
  ASSERT_GT(records.size(), 10u);
  const size_t slots = 2 * records.size();
  absl::StatusOr<TensorBatch> got = TensorBatch::Create(slots);
  absl::StatusOr<TensorBatch> want = TensorBatch::Create(slots);
  ASSERT_TRUE(got.ok() && want.ok());
  std::memset(got->planes(0), 0x55, got->allocation_bytes());
  std::memset(want->planes(0), 0x55, want->allocation_bytes());
  const absl::StatusOr<TensorExpander> expander = TensorExpander::Create(1);
  ASSERT_TRUE(expander.ok());
  PackedExpander packed_expander(*expander);
  auto unpacked = std::make_unique<V6TrainingRecord>();
  for (size_t slot = 0; slot < slots; ++slot) {
    const PackedRecord packed =
        PackedRecord::Pack(records[slot % records.size()]);
    packed_expander.Expand(packed, &*got, slot);
    packed.Unpack(unpacked.get());
    expander->Expand(*unpacked, &*want, slot);
  }
  for (TensorId id : {TensorId::kPlanes, TensorId::kProbs, TensorId::kWinner,
                      TensorId::kBestQ, TensorId::kPliesLeft}) {
    const TensorView view = got->view(id);
    EXPECT_EQ(std::memcmp(view.data, want->view(id).data, view.bytes), 0)
        << view.name;
  }
}

}  // namespace
}  // namespace sluice::lc0
