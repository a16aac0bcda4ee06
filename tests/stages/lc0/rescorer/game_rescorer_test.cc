#include "stages/lc0/rescorer/game_rescorer.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/rescorer/endgame_generator.h"
#include "tests/stages/lc0/rescorer/rescorer_test_data.h"

namespace sluice::lc0::rescorer {
namespace {

V6TrainingRecord RecordAt(std::string_view records, size_t i,
                          size_t record_size = kV6RecordSize) {
  V6TrainingRecord record;
  std::memcpy(&record, records.data() + i * record_size, sizeof(record));
  return record;
}

std::vector<testing::GameFile> Games() {
  return testing::ReadGames(testing::RescorerDataDir() / "input");
}

// Generated games that end in tablebase range pass every check and get
// probed: the benchmark's data is what lc0 would accept.
TEST(GameRescorerTest, GeneratedEndgamesAreRescored) {
  const GameRescorer rescorer(testing::LoadRescorerTables(),
                              {.deblunder = true,
                               .deblunder_threshold = 0.1f,
                               .deblunder_width = 0.03f});
  RescoreCounts counts;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::string game = GenerateEndgameGame(seed);
    ASSERT_EQ(game, GenerateEndgameGame(seed));
    std::string out;
    const auto rejection = rescorer.Rescore(game, &out, &counts);
    ASSERT_FALSE(rejection)
        << seed << ": " << rejection->reason << " " << rejection->detail;
    EXPECT_EQ(out.size(), game.size());
  }
  EXPECT_EQ(counts.games, 20u);
  EXPECT_GT(counts.positions_probed, 20u);
  EXPECT_GT(counts.blunders, 0u);
}

// Converting canonical data to format 1 gives lc0's own format-1 encoding
// of the same game, for games whose first record has white to move (for
// black, the replay of canonical data swaps the colours, as lc0's does).
TEST(GameRescorerTest, ConversionToFormatOneMatchesTheFormatOneInput) {
  const auto tables = testing::LoadRescorerTables();
  const GameRescorer keep(tables, {});
  const GameRescorer to_format1(tables, {.new_input_format = 1});
  const std::vector<testing::GameFile> games = Games();
  int compared = 0;
  for (const testing::GameFile& f1 : games) {
    if (!f1.name.ends_with("_f1.gz")) continue;
    const std::string f3_name =
        f1.name.substr(0, f1.name.size() - 6) + "_f3.gz";
    const testing::GameFile* f3 = nullptr;
    for (const testing::GameFile& game : games) {
      if (game.name == f3_name) f3 = &game;
    }
    if (f3 == nullptr || RecordAt(f1.records, 0).side_to_move_or_enpassant) {
      continue;
    }
    std::string expected, converted;
    RescoreCounts counts;
    ASSERT_FALSE(keep.Rescore(f1.records, &expected, &counts));
    ASSERT_FALSE(to_format1.Rescore(f3->records, &converted, &counts));
    ASSERT_EQ(converted.size(), expected.size()) << f1.name;
    for (size_t i = 0; i * kV6RecordSize < expected.size(); ++i) {
      const V6TrainingRecord a = RecordAt(converted, i);
      const V6TrainingRecord b = RecordAt(expected, i);
      EXPECT_EQ(std::memcmp(a.planes, b.planes, sizeof(a.planes)), 0)
          << f1.name << " record " << i;
      EXPECT_EQ(std::memcmp(a.probabilities, b.probabilities,
                            sizeof(a.probabilities)),
                0)
          << f1.name << " record " << i;
      EXPECT_EQ(a.played_idx, b.played_idx) << f1.name << " record " << i;
      EXPECT_EQ(a.side_to_move_or_enpassant, b.side_to_move_or_enpassant);
      EXPECT_EQ(a.castling_us_oo, b.castling_us_oo);
      EXPECT_EQ(a.castling_them_ooo, b.castling_them_ooo);
      EXPECT_EQ(a.input_format, 1u);
    }
    ++compared;
  }
  EXPECT_GT(compared, 20);
}

// V7 output read again with output_version 7 keeps its V7 fields; read
// with 6 it becomes V6 again.
TEST(GameRescorerTest, VersionSevenRoundTrip) {
  const auto tables = testing::LoadRescorerTables();
  const GameRescorer v7(tables, {.output_version = 7});
  const GameRescorer v6(tables, {});
  const std::string game = Games()[0].records;
  std::string once, twice, back;
  RescoreCounts counts;
  ASSERT_FALSE(v7.Rescore(game, &once, &counts));
  ASSERT_FALSE(v7.Rescore(once, &twice, &counts));
  EXPECT_EQ(once, twice);
  ASSERT_FALSE(v6.Rescore(once, &back, &counts));
  std::string direct;
  ASSERT_FALSE(v6.Rescore(game, &direct, &counts));
  EXPECT_EQ(back, direct);
}

// Older versions are upgraded as lc0's reader does (no visits: deblunder
// and the played_idx check skipped; results from the int8).
TEST(GameRescorerTest, OlderVersionsAreUpgradedAsByLc0) {
  const GameRescorer rescorer(testing::LoadRescorerTables(),
                              {.deblunder = true, .deblunder_threshold = 0.1f});
  const std::string v6 = Games()[0].records;
  // The same game as V5: the V6 fields dropped, the result as an int8.
  std::string v5;
  for (size_t i = 0; i * kV6RecordSize < v6.size(); ++i) {
    V6TrainingRecord record = RecordAt(v6, i);
    record.version = 5;
    record.result = static_cast<int8_t>(record.result_q);
    v5.append(reinterpret_cast<const char*>(&record), kV5RecordSize);
  }
  std::string out;
  RescoreCounts counts;
  const auto rejection = rescorer.Rescore(v5, &out, &counts);
  ASSERT_FALSE(rejection) << rejection->reason << " " << rejection->detail;
  ASSERT_EQ(out.size(), v6.size());
  for (size_t i = 0; i * kV6RecordSize < out.size(); ++i) {
    const V6TrainingRecord record = RecordAt(out, i);
    EXPECT_EQ(record.version, 6u);
    EXPECT_EQ(record.visits, 0u);
    EXPECT_TRUE(std::isnan(record.orig_q));
  }
  EXPECT_EQ(counts.blunders, 0u);
}

TEST(GameRescorerTest, PolicyOptionsKeepPoliciesNormalised) {
  const GameRescorer rescorer(
      testing::LoadRescorerTables(),
      {.temperature = 0.5f, .dist_offset = -0.01f, .dtz_policy_boost = 0.3f});
  for (const testing::GameFile& game : Games()) {
    std::string out;
    RescoreCounts counts;
    ASSERT_FALSE(rescorer.Rescore(game.records, &out, &counts)) << game.name;
    for (size_t i = 0; i * kV6RecordSize < out.size(); ++i) {
      const V6TrainingRecord record = RecordAt(out, i);
      double sum = 0;
      for (const float p : record.probabilities) {
        if (p >= 0) sum += p;
      }
      EXPECT_NEAR(sum, 1.0, 1e-4) << game.name << " record " << i;
    }
  }
}

TEST(GameRescorerTest, OneRecordGameIsCheckedButNotProbed) {
  const GameRescorer rescorer(testing::LoadRescorerTables(), {});
  const std::string game = Games()[0].records.substr(0, kV6RecordSize);
  std::string out;
  RescoreCounts counts;
  ASSERT_FALSE(rescorer.Rescore(game, &out, &counts));
  EXPECT_EQ(counts.positions, 1u);
  EXPECT_EQ(counts.positions_probed, 0u);
  EXPECT_EQ(out.size(), kV6RecordSize);
}

}  // namespace
}  // namespace sluice::lc0::rescorer
