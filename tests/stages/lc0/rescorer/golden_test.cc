// The rescorer against Leela Chess Zero's own rescorer, byte for byte: 59
// one-game chunks (tests/data/rescorer/input) under every option set of
// lc0's golden runs (the options in GoldenRuns below), each output's
// decompressed records compared by length and FNV-1a 64 with lc0's
// (tests/data/rescorer/expected.tsv), through Rescore and RescoreInPlace.
// Tables: the Syzygy 3-4-piece files the games need.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/stable_hash.h"
#include "gtest/gtest.h"
#include "io/gzip.h"
#include "io/recycled_bytes.h"
#include "stages/lc0/chess/syzygy_tablebase.h"
#include "stages/lc0/rescorer/game_rescorer.h"
#include "tests/stages/lc0/rescorer/rescorer_test_data.h"

namespace sluice::lc0::rescorer {
namespace {

struct GoldenRun {
  std::string name;
  RescoreOptions options;
};

std::vector<GoldenRun> GoldenRuns() {
  RescoreOptions deblunder{
      .deblunder = true, .deblunder_threshold = 0.1f, .deblunder_width = 0.03f};
  RescoreOptions deblunder_hard = deblunder;
  deblunder_hard.deblunder_width = 0;
  const RescoreOptions boost{.dtz_policy_boost = 0.5f};
  const RescoreOptions to_format3{.new_input_format = 3};
  auto v7 = [](RescoreOptions options) {
    options.output_version = 7;
    return options;
  };
  return {{"rescored_tb", {}},
          {"rescored_deblunder", deblunder},
          {"rescored_deblunder_hard", deblunder_hard},
          {"rescored_dtz_boost", boost},
          {"rescored_to_format3", to_format3},
          {"v7_tb", v7({})},
          {"v7_deblunder", v7(deblunder)},
          {"v7_dtz_boost", v7(boost)}};
}

struct Expected {
  size_t records = 0;
  uint64_t hash = 0;
};

// expected.tsv: run, file, records, FNV-1a 64 (hex) of the records.
std::map<std::pair<std::string, std::string>, Expected> ReadExpected() {
  std::map<std::pair<std::string, std::string>, Expected> expected;
  std::ifstream in(testing::RescorerDataDir() / "expected.tsv");
  std::string run, file, hash;
  size_t records;
  while (in >> run >> file >> records >> hash) {
    expected[{run, file}] = {records, std::stoull(hash, nullptr, 16)};
  }
  return expected;
}

TEST(RescorerGoldenTest, EveryRunMatchesLc0ByteForByte) {
  const auto expected = ReadExpected();
  ASSERT_FALSE(expected.empty());
  const auto tables = testing::LoadRescorerTables();
  const std::vector<testing::GameFile> inputs =
      testing::ReadGames(testing::RescorerDataDir() / "input");
  ASSERT_EQ(inputs.size(), 59u);
  int compared = 0;
  for (const GoldenRun& run : GoldenRuns()) {
    const GameRescorer rescorer(tables, run.options);
    RescoreCounts counts;
    RescoreCounts in_place_counts;
    for (const testing::GameFile& input : inputs) {
      std::string out;
      const std::optional<Rejection> rejection =
          rescorer.Rescore(input.records, &out, &counts);
      ASSERT_FALSE(rejection) << run.name << " " << input.name << ": "
                              << rejection->reason << " " << rejection->detail;
      const auto it = expected.find({run.name, input.name});
      ASSERT_NE(it, expected.end()) << run.name << " " << input.name;
      const size_t record_size =
          run.options.output_version == 7 ? kV7RecordSize : kV6RecordSize;
      EXPECT_EQ(out.size(), it->second.records * record_size)
          << run.name << " " << input.name;
      EXPECT_EQ(Fnv1a64(out), it->second.hash) << run.name << " " << input.name;
      io::RecycledBytes in_place{std::string_view(input.records)};
      ASSERT_FALSE(rescorer.RescoreInPlace(&in_place, &in_place_counts))
          << run.name << " " << input.name;
      EXPECT_EQ(std::string_view(in_place), out)
          << "in place: " << run.name << " " << input.name;
      ++compared;
    }
    EXPECT_EQ(counts.games, inputs.size()) << run.name;
    EXPECT_EQ(in_place_counts.positions, counts.positions) << run.name;
    EXPECT_EQ(in_place_counts.records_dropped, counts.records_dropped)
        << run.name;
    EXPECT_EQ(in_place_counts.results_changed, counts.results_changed)
        << run.name;
    EXPECT_EQ(in_place_counts.blunders, counts.blunders) << run.name;
  }
  EXPECT_EQ(compared, static_cast<int>(expected.size()));
}

TEST(RescorerGoldenTest, CountsOfTheTablebaseRun) {
  const GameRescorer rescorer(testing::LoadRescorerTables(), {});
  RescoreCounts counts;
  for (const testing::GameFile& input :
       testing::ReadGames(testing::RescorerDataDir() / "input")) {
    std::string out;
    ASSERT_FALSE(rescorer.Rescore(input.records, &out, &counts));
  }
  EXPECT_EQ(counts.games, 59u);
  EXPECT_EQ(counts.records_dropped, 2u * 2);  // g30, f1 and f3
  EXPECT_GT(counts.positions_probed, 0u);
  EXPECT_GT(counts.dtz_decisions, 0u);
  EXPECT_GT(counts.results_changed, 0u);
}

// lc0 HEAD maps transposed canonical records' moves with a half turn; data
// written with the older, planes-consistent mapping lists other indices,
// and lc0 refuses it.
TEST(RescorerGoldenTest, RefusesLegacyTransposeIndicesAsLc0) {
  const GameRescorer rescorer(testing::LoadRescorerTables(), {});
  const std::vector<testing::GameFile> inputs =
      testing::ReadGames(testing::RescorerDataDir() / "input_legacy_transpose");
  ASSERT_EQ(inputs.size(), 6u);
  for (const testing::GameFile& input : inputs) {
    std::string out;
    RescoreCounts counts;
    const std::optional<Rejection> rejection =
        rescorer.Rescore(input.records, &out, &counts);
    ASSERT_TRUE(rejection) << input.name;
    EXPECT_EQ(rejection->reason, "played_move_not_listed") << input.name;
    EXPECT_TRUE(out.empty());
  }
}

// Deblundered results are fractional: lc0 refuses to read such a file
// again (record 0's result is always read, and deblunder rewrites it).
TEST(RescorerGoldenTest, DeblunderedOutputReadAgainIsRefusedAsByLc0) {
  RescoreOptions deblunder{
      .deblunder = true, .deblunder_threshold = 0.1f, .deblunder_width = 0.03f};
  const auto tables = testing::LoadRescorerTables();
  const GameRescorer first(tables, deblunder);
  const GameRescorer second(tables, {});
  int fractional = 0;
  int refused = 0;
  for (const testing::GameFile& input :
       testing::ReadGames(testing::RescorerDataDir() / "input")) {
    std::string once;
    RescoreCounts counts;
    ASSERT_FALSE(first.Rescore(input.records, &once, &counts));
    bool has_fraction = false;
    for (size_t offset = 0; offset < once.size(); offset += kV6RecordSize) {
      V6TrainingRecord record;
      std::memcpy(&record, once.data() + offset, sizeof(record));
      has_fraction |= record.result_q != std::round(record.result_q);
    }
    fractional += has_fraction;
    std::string twice;
    const std::optional<Rejection> rejection =
        second.Rescore(once, &twice, &counts);
    EXPECT_EQ(rejection.has_value(), has_fraction) << input.name;
    if (rejection) {
      EXPECT_EQ(rejection->reason, "range_violation") << input.name;
      ++refused;
    }
  }
  EXPECT_GT(fractional, 0);
  EXPECT_EQ(refused, fractional);
}

}  // namespace
}  // namespace sluice::lc0::rescorer
