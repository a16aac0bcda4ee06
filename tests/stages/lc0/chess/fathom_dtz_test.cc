#include "stages/lc0/chess/internal/fathom_dtz.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "stages/lc0/chess/internal/syzygy_file_check.h"
#include "stages/lc0/chess/syzygy_tablebase.h"

namespace sluice::lc0::chess::internal {
namespace {

const std::filesystem::path kTables = "tests/data/rescorer/tables";

// The materials of the DTZ tables shipped with the tests.
std::vector<std::string> DtzMaterials() {
  std::vector<std::string> materials;
  for (const auto& entry : std::filesystem::directory_iterator(kTables)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".rtbz")) {
      materials.push_back(name.substr(0, name.size() - 5));
    }
  }
  return materials;
}

// The table lookup gives the root probe's DTZ on 200 random positions of
// every table, either side to move: wins, losses, draws, mates, zeroing
// captures and pawn moves, tables that hold one side to move.
TEST(FathomDtzTest, EqualsTheRootProbeOnRandomPositionsOfEveryTable) {
  auto direct = SyzygyTablebase::Load({kTables.string()});
  auto root = SyzygyTablebase::Load({kTables.string()}, {.direct_dtz = false});
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_TRUE((*direct)->probes_dtz_directly());
  ASSERT_FALSE((*root)->probes_dtz_directly());
  const std::vector<std::string> materials = DtzMaterials();
  ASSERT_EQ(materials.size(), 35u);
  uint64_t random = 42;
  int compared = 0;
  int nonzero = 0;
  for (const std::string& material : materials) {
    for (int i = 0; i < 200; ++i) {
      const std::optional<Position> position =
          RandomPositionOf(material, random);
      ASSERT_TRUE(position.has_value()) << material;
      const std::optional<int> expected = (*root)->ProbeDtz(*position);
      ASSERT_TRUE(expected.has_value()) << position->Fen();
      EXPECT_EQ((*direct)->ProbeDtz(*position), expected) << position->Fen();
      ++compared;
      nonzero += *expected != 0;
    }
  }
  EXPECT_EQ(compared, 35 * 200);
  EXPECT_GT(nonzero, compared / 3);
}

// A position in which an en passant capture is legal goes to the root
// probe; one whose en passant square no pawn can take does not.
TEST(FathomDtzTest, HandlesAllButLegalEnPassantCaptures) {
  const absl::StatusOr<Position> capturable =
      Position::FromFen("8/8/8/3pP3/8/8/k7/4K3 w - d6 0 2");
  ASSERT_TRUE(capturable.ok()) << capturable.status();
  EXPECT_FALSE(FathomDtz::Handles(*capturable));
  // Taking would leave the white king in the rook's line: no legal
  // capture.
  const absl::StatusOr<Position> pinned =
      Position::FromFen("8/8/8/r2pP2K/8/8/8/k7 w - d6 0 2");
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_TRUE(FathomDtz::Handles(*pinned));
  const absl::StatusOr<Position> none =
      Position::FromFen("8/8/8/3pP3/8/8/k7/4K3 w - - 0 2");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(FathomDtz::Handles(*none));
}

// The DTZ of a 4-piece position with a legal en passant capture is the
// root probe's through either path.
TEST(FathomDtzTest, EnPassantPositionsProbeAsTheRootProbe) {
  auto direct = SyzygyTablebase::Load({kTables.string()});
  auto root = SyzygyTablebase::Load({kTables.string()}, {.direct_dtz = false});
  ASSERT_TRUE(direct.ok() && root.ok());
  for (const char* fen : {"8/8/8/3pP3/8/8/k7/4K3 w - d6 0 2",
                          "4k3/8/8/8/2Pp4/8/8/4K3 b - c3 0 1"}) {
    const absl::StatusOr<Position> position = Position::FromFen(fen);
    ASSERT_TRUE(position.ok()) << fen;
    const std::optional<int> expected = (*root)->ProbeDtz(*position);
    ASSERT_TRUE(expected.has_value()) << fen;
    EXPECT_EQ((*direct)->ProbeDtz(*position), expected) << fen;
  }
}

}  // namespace
}  // namespace sluice::lc0::chess::internal
