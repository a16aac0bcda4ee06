// The rescorer's test fixtures (tests/data/rescorer/): one-game chunks and
// the Syzygy tables they need.
#ifndef SLUICE_TESTS_STAGES_LC0_RESCORER_RESCORER_TEST_DATA_H_
#define SLUICE_TESTS_STAGES_LC0_RESCORER_RESCORER_TEST_DATA_H_

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "stages/lc0/chess/syzygy_tablebase.h"

namespace sluice::lc0::rescorer::testing {

// tests/data/rescorer (tests run from the source root).
std::filesystem::path RescorerDataDir();

// The tables under tests/data/rescorer/tables, loaded once (checksums
// verified); the test fails on an error.
std::shared_ptr<const chess::SyzygyTablebase> LoadRescorerTables();

struct GameFile {
  std::string name;     // the .gz file name
  std::string records;  // decompressed
};

// Every *.gz file of `dir`, decompressed, in name order.
std::vector<GameFile> ReadGames(const std::filesystem::path& dir);

}  // namespace sluice::lc0::rescorer::testing

#endif  // SLUICE_TESTS_STAGES_LC0_RESCORER_RESCORER_TEST_DATA_H_
