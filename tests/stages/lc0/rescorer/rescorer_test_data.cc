#include "tests/stages/lc0/rescorer/rescorer_test_data.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "io/gzip.h"

namespace sluice::lc0::rescorer::testing {

std::filesystem::path RescorerDataDir() { return "tests/data/rescorer"; }

std::shared_ptr<const chess::SyzygyTablebase> LoadRescorerTables() {
  static const std::shared_ptr<const chess::SyzygyTablebase> tables = [] {
    auto loaded =
        chess::SyzygyTablebase::Load({(RescorerDataDir() / "tables").string()});
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return loaded.ok() ? *loaded : nullptr;
  }();
  return tables;
}

std::vector<GameFile> ReadGames(const std::filesystem::path& dir) {
  std::vector<GameFile> games;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".gz") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    absl::StatusOr<std::string> records = io::Gunzip(bytes.str(), 1 << 26);
    EXPECT_TRUE(records.ok()) << entry.path() << ": " << records.status();
    games.push_back(
        {entry.path().filename().string(), records.ok() ? *records : ""});
  }
  std::sort(
      games.begin(), games.end(),
      [](const GameFile& a, const GameFile& b) { return a.name < b.name; });
  return games;
}

}  // namespace sluice::lc0::rescorer::testing
