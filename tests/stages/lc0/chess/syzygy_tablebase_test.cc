#include "stages/lc0/chess/syzygy_tablebase.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/lc0/chess/internal/syzygy_checksum.h"

namespace sluice::lc0::chess {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kData = "tests/data/rescorer";

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A fresh directory with copies of the named tables, one of them replaced
// by `damaged` bytes when given.
std::filesystem::path TableCopy(const std::string& test,
                                const std::vector<std::string>& names,
                                const std::string& damaged_name = "",
                                const std::string& damaged = "") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sluice_syzygy_" + test);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const std::string& name : names) {
    std::ofstream out(dir / name, std::ios::binary);
    out << (name == damaged_name ? damaged : ReadFile(kData / "tables" / name));
  }
  return dir;
}

// Every position of the golden games that lc0 probed: the same WDL and
// DTZ through fathom, by its table lookup and by its root probe.
class SyzygyProbeTest : public ::testing::TestWithParam<bool> {};

TEST_P(SyzygyProbeTest, ProbesAsLc0) {
  const bool direct_dtz = GetParam();
  absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> tables =
      SyzygyTablebase::Load({(kData / "tables").string()},
                            {.direct_dtz = direct_dtz});
  ASSERT_TRUE(tables.ok()) << tables.status();
  EXPECT_EQ((*tables)->max_cardinality(), 4);
  EXPECT_EQ((*tables)->wdl_tables(), 35);
  EXPECT_EQ((*tables)->dtz_tables(), 35);
  // Debian's libfathom exports the table lookup.
  EXPECT_EQ((*tables)->probes_dtz_directly(), direct_dtz);
  std::ifstream in(kData / "probes.tsv");
  std::string line;
  int probed = 0;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) continue;
    std::stringstream fields(line);
    std::string fen;
    int wdl = 0;
    int dtz = 0;
    std::getline(fields, fen, '\t');
    fields >> wdl >> dtz;
    absl::StatusOr<Position> position = Position::FromFen(fen);
    ASSERT_TRUE(position.ok()) << fen;
    ASSERT_TRUE((*tables)->CanProbe(*position)) << fen;
    const std::optional<Wdl> probed_wdl = (*tables)->ProbeWdl(*position);
    ASSERT_TRUE(probed_wdl.has_value()) << fen;
    EXPECT_EQ(static_cast<int>(*probed_wdl), wdl) << fen;
    const std::optional<int> probed_dtz = (*tables)->ProbeDtz(*position);
    ASSERT_TRUE(probed_dtz.has_value()) << fen;
    EXPECT_EQ(*probed_dtz, dtz) << fen;
    ++probed;
  }
  EXPECT_GT(probed, 700);
}

INSTANTIATE_TEST_SUITE_P(TableLookupAndRootProbe, SyzygyProbeTest,
                         ::testing::Bool());

TEST(SyzygyTablebaseTest, CannotProbeCastlingRightsOrTooManyPieces) {
  absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> tables =
      SyzygyTablebase::Load({(kData / "tables").string()});
  ASSERT_TRUE(tables.ok()) << tables.status();
  const Position castling =
      *Position::FromFen("4k3/8/8/8/8/8/8/4K2R w K - 0 1");
  EXPECT_FALSE((*tables)->CanProbe(castling));
  EXPECT_FALSE((*tables)->ProbeWdl(castling).has_value());
  const Position five = *Position::FromFen("4k3/8/8/8/8/8/8/RR2K2R w - - 0 1");
  EXPECT_FALSE((*tables)->ProbeWdl(five).has_value());
  const Position krk = *Position::FromFen("4k3/8/8/8/8/8/8/4K2R w - - 0 1");
  EXPECT_EQ((*tables)->ProbeWdl(krk), Wdl::kWin);
}

TEST(SyzygyTablebaseTest, APositionWhoseWaitingKingIsInCheckIsNotProbed) {
  absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> tables =
      SyzygyTablebase::Load({(kData / "tables").string()});
  ASSERT_TRUE(tables.ok()) << tables.status();
  // White to move with the black king in check from the queen: illegal,
  // and fathom asserts on it.
  const Position illegal = *Position::FromFen("7k/8/8/8/8/8/8/K6Q w - - 0 1");
  EXPECT_FALSE((*tables)->CanProbe(illegal));
  EXPECT_FALSE((*tables)->ProbeWdl(illegal).has_value());
  EXPECT_FALSE((*tables)->ProbeDtz(illegal).has_value());
  const Position legal = *Position::FromFen("7k/8/8/8/8/8/8/K5Q1 w - - 0 1");
  EXPECT_EQ((*tables)->ProbeWdl(legal), Wdl::kWin);
}

TEST(SyzygyTablebaseTest, ChecksumsOfTheShippedTablesMatch) {
  for (const auto& entry :
       std::filesystem::directory_iterator(kData / "tables")) {
    const std::string bytes = ReadFile(entry.path());
    EXPECT_TRUE(internal::SyzygyChecksumMatches(
        reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()))
        << entry.path();
  }
}

TEST(SyzygyTablebaseTest, MissingOrEmptyPathsAreErrorsNamingThem) {
  absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> missing =
      SyzygyTablebase::Load({"/nonexistent/syzygy"});
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/syzygy"));
  const std::filesystem::path empty = TableCopy("empty", {});
  absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> none =
      SyzygyTablebase::Load({empty.string()});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(SyzygyTablebase::Load({}).ok());
}

// Truncated, foreign and bit-flipped table files are refused at load and
// named, before fathom ever maps them.
TEST(SyzygyTablebaseTest, DamagedTablesAreErrorsNamingTheFile) {
  const std::string good = ReadFile(kData / "tables" / "KQvK.rtbw");
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;
  std::string foreign = good;
  foreign[0] ^= 0x01;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated", good.substr(0, good.size() - 64)},
      {"short", good.substr(0, 10)},
      {"flipped", flipped},
      {"magic", foreign},
      {"empty", ""}};
  for (const auto& [name, bytes] : cases) {
    const std::filesystem::path dir = TableCopy(
        "damaged_" + name, {"KQvK.rtbw", "KQvK.rtbz"}, "KQvK.rtbw", bytes);
    absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> tables =
        SyzygyTablebase::Load({dir.string()});
    ASSERT_FALSE(tables.ok()) << name;
    EXPECT_THAT(tables.status().message(), HasSubstr("KQvK.rtbw")) << name;
  }
  // Without checksums only the size and the magic number are checked.
  const std::filesystem::path dir =
      TableCopy("damaged_unverified", {"KQvK.rtbw", "KQvK.rtbz"}, "KQvK.rtbw",
                good.substr(0, good.size() - 10));
  EXPECT_FALSE(
      SyzygyTablebase::Load({dir.string()}, {.verify_checksums = false}).ok());
}

// fathom holds one set of tables per process: another set is refused
// while the first is in use, and loads once it is released.
TEST(SyzygyTablebaseTest, OneSetOfTablesAtATime) {
  const std::filesystem::path kqk =
      TableCopy("one_set", {"KQvK.rtbw", "KQvK.rtbz"});
  {
    absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> all =
        SyzygyTablebase::Load({(kData / "tables").string()});
    ASSERT_TRUE(all.ok()) << all.status();
    absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> again =
        SyzygyTablebase::Load({(kData / "tables").string()});
    EXPECT_TRUE(again.ok()) << again.status();
    absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> other =
        SyzygyTablebase::Load({kqk.string()});
    EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  }
  absl::StatusOr<std::shared_ptr<const SyzygyTablebase>> other =
      SyzygyTablebase::Load({kqk.string()});
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ((*other)->max_cardinality(), 3);
}

}  // namespace
}  // namespace sluice::lc0::chess
