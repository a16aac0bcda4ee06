#include "stages/lc0/format/data_generator.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "io/tar_index.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/record_validator.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {
namespace {

namespace fs = std::filesystem;

std::string Game(const GeneratorOptions& options, uint64_t index) {
  absl::StatusOr<std::string> game = GenerateGame(options, index);
  EXPECT_TRUE(game.ok()) << game.status();
  return game.ok() ? *game : "";
}

std::vector<V6TrainingRecord> Records(const std::string& chunk) {
  std::vector<V6TrainingRecord> records(chunk.size() / kV6RecordSize);
  std::memcpy(records.data(), chunk.data(), records.size() * kV6RecordSize);
  return records;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A fresh, empty directory under the test temp dir.
fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / ("data_generator_" + name);
  fs::remove_all(dir);
  return dir;
}

TEST(DataGeneratorTest, SameSeedSameBytes) {
  const GeneratorOptions options{.seed = 42};
  EXPECT_EQ(Game(options, 3), Game(options, 3));
  const fs::path a = FreshDir("same_a"), b = FreshDir("same_b");
  for (const fs::path& dir : {a, b}) {
    ASSERT_TRUE(WriteGames(options, {.mode = OutputMode::kTar,
                                     .dir = dir,
                                     .games = 3,
                                     .games_per_tar = 2})
                    .ok());
  }
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(a)) {
    EXPECT_EQ(ReadFile(entry.path()), ReadFile(b / entry.path().filename()));
    ++compared;
  }
  EXPECT_EQ(compared, 2);
}

TEST(DataGeneratorTest, DifferentSeedsDiffer) {
  EXPECT_NE(Game({.seed = 1}, 0), Game({.seed = 2}, 0));
  EXPECT_NE(Game({.seed = 1}, 0), Game({.seed = 1}, 1));
}

TEST(DataGeneratorTest, GameLengthsInRange) {
  for (uint64_t game = 0; game < 30; ++game) {
    const std::string chunk = Game({.seed = 5}, game);
    ASSERT_EQ(chunk.size() % kV6RecordSize, 0u);
    const size_t positions = chunk.size() / kV6RecordSize;
    EXPECT_GE(positions, static_cast<size_t>(kMinGamePositions));
    EXPECT_LE(positions, static_cast<size_t>(kMaxGamePositions));
  }
}

class RecordTest : public ::testing::TestWithParam<int> {};

TEST_P(RecordTest, RecordsAreConsistent) {
  const int format = GetParam();
  for (uint64_t game = 0; game < 5; ++game) {
    const std::vector<V6TrainingRecord> records =
        Records(Game({.seed = 9, .input_format = format}, game));
    ASSERT_FALSE(records.empty());
    for (size_t i = 0; i < records.size(); ++i) {
      const V6TrainingRecord& r = records[i];
      SCOPED_TRACE(absl::StrCat("game ", game, " record ", i));
      EXPECT_EQ(r.version, 6u);
      EXPECT_EQ(r.input_format, static_cast<uint32_t>(format));
      int legal = 0;
      double sum = 0;
      for (float p : r.probabilities) {
        if (p == -1.0f) continue;
        ASSERT_GE(p, 0.0f);
        ++legal;
        sum += p;
      }
      EXPECT_GE(legal, kMinLegalMoves);
      EXPECT_LE(legal, kMaxLegalMoves);
      EXPECT_NEAR(sum, 1.0, 1e-4);
      EXPECT_GE(r.probabilities[r.best_idx], 0.0f);
      EXPECT_GE(r.probabilities[r.played_idx], 0.0f);
      for (auto [q, d] :
           {std::pair{r.best_q, r.best_d}, std::pair{r.root_q, r.root_d},
            std::pair{r.result_q, r.result_d}}) {
        EXPECT_GE(d, 0.0f);
        EXPECT_LE(d, 1.0f);
        EXPECT_LE(std::abs(q) + d, 1.0f + 1e-5f);
      }
      EXPECT_FLOAT_EQ(r.plies_left, static_cast<float>(records.size() - i));
      EXPECT_GT(r.policy_kld, 0.0f);
      EXPECT_GT(r.visits, 0u);
      if (format == 3) {
        for (uint8_t c : {r.castling_us_ooo, r.castling_them_ooo}) {
          EXPECT_TRUE(c == 0 || c == 0x01);
        }
        for (uint8_t c : {r.castling_us_oo, r.castling_them_oo}) {
          EXPECT_TRUE(c == 0 || c == 0x80);
        }
        EXPECT_LE(__builtin_popcount(r.side_to_move_or_enpassant), 1);
      } else {
        EXPECT_EQ(r.side_to_move_or_enpassant, i % 2);  // black on odd plies
      }
      if (i + 1 == records.size()) continue;
      const V6TrainingRecord& next = records[i + 1];
      // The result is seen from the side to move, which alternates.
      EXPECT_EQ(next.result_q, -r.result_q);
      // The next record's previous position is this one, from the other
      // side: us/them swapped and the board mirrored (ranks reversed).
      // Format 3 history stops at a capture or pawn move (rule50 = 0).
      const bool history_cut = format == 3 && next.rule50_count == 0;
      for (int p = 0; p < 6; ++p) {
        // Copies: EXPECT_EQ binds references, and the packed record's
        // planes are not 8-byte aligned.
        const uint64_t next_them = next.planes[13 + p];
        const uint64_t next_us = next.planes[19 + p];
        const uint64_t us = r.planes[6 + p];
        const uint64_t them = r.planes[p];
        EXPECT_EQ(next_them, history_cut ? 0 : __builtin_bswap64(us));
        EXPECT_EQ(next_us, history_cut ? 0 : __builtin_bswap64(them));
      }
    }
    // Each side sees its own untouched pawns on its second rank, the
    // opponent's (before they move) on its seventh.
    const uint64_t first_us = records[0].planes[0];
    const uint64_t first_them = records[0].planes[6];
    const uint64_t second_us = records[1].planes[0];
    EXPECT_EQ(first_us, 0xff00u);
    EXPECT_EQ(first_them, 0x00ff000000000000u);
    EXPECT_EQ(second_us, 0xff00u);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, RecordTest, ::testing::Values(1, 3));

TEST(DataGeneratorTest, OlderVersionsAreCutV6Records) {
  const std::string v6 = Game({.seed = 11}, 0);
  for (int version : {3, 4, 5}) {
    SCOPED_TRACE(version);
    const size_t size = version == 3   ? kV3RecordSize
                        : version == 4 ? kV4RecordSize
                                       : kV5RecordSize;
    const std::string chunk = Game({.seed = 11, .version = version}, 0);
    ASSERT_EQ(chunk.size() % size, 0u);
    EXPECT_EQ(chunk.size() / size, v6.size() / kV6RecordSize);
    uint32_t stored_version;
    std::memcpy(&stored_version, chunk.data(), 4);
    EXPECT_EQ(stored_version, static_cast<uint32_t>(version));
    // Probabilities and planes are the V6 ones, after the version field and
    // (from V5 on) input_format.
    const size_t header = version == 5 ? 8 : 4;
    const size_t body = kPolicySize * 4 + kBitPlanes * 8;
    EXPECT_EQ(chunk.substr(header, body), v6.substr(8, body));
    // The int8 result (side to move's view) is set.
    const int8_t result = static_cast<int8_t>(chunk[header + body + 7]);
    EXPECT_TRUE(result >= -1 && result <= 1);
    EXPECT_EQ(result, static_cast<int8_t>(Records(v6)[0].result_q));
  }
  EXPECT_EQ(ValidateGeneratorOptions({.version = 4, .input_format = 3}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(GenerateGame({.version = 7}, 0).ok());
}

// Every version / format the generator writes passes the validator.
TEST(DataGeneratorTest, ValidatorAcceptsEveryRecord) {
  for (auto [version, format] :
       {std::pair{3, 1}, std::pair{4, 1}, std::pair{5, 1}, std::pair{5, 3},
        std::pair{6, 1}, std::pair{6, 3}}) {
    SCOPED_TRACE(absl::StrCat("version ", version, " format ", format));
    const std::string chunk =
        Game({.seed = 13, .version = version, .input_format = format}, 0);
    const ChunkCheck check = CheckChunk(chunk);
    ASSERT_FALSE(check.reject.has_value());
    ASSERT_EQ(check.record_size * check.record_count, chunk.size());
    for (size_t i = 0; i < check.record_count; ++i) {
      V6TrainingRecord record;
      UpconvertToV6(std::string_view(chunk).substr(i * check.record_size,
                                                   check.record_size),
                    check.version, &record);
      const std::optional<RejectReason> reject =
          CheckRecord(record, check.version, format);
      EXPECT_FALSE(reject.has_value())
          << "record " << i << ": " << RejectReasonName(*reject);
    }
  }
}

TEST(DataGeneratorTest, GzipIsDeterministicWithZeroMtime) {
  absl::StatusOr<std::string> gz = GzipChunk("some bytes");
  ASSERT_TRUE(gz.ok()) << gz.status();
  EXPECT_EQ(gz->substr(0, 2), "\x1f\x8b");
  EXPECT_EQ(gz->substr(4, 4), std::string(4, '\0'));
}

TEST(DataGeneratorTest, WritesLooseChunks) {
  const GeneratorOptions options{.seed = 3, .version = 5};
  const fs::path dir = FreshDir("loose");
  absl::StatusOr<GeneratedFiles> files =
      WriteGames(options, {.mode = OutputMode::kLoose, .dir = dir, .games = 3});
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->paths.size(), 3u);
  for (int game = 0; game < 3; ++game) {
    const fs::path path =
        dir / absl::StrCat("training.", kFirstGameId + game, ".gz");
    EXPECT_EQ(files->paths[game], path.string());
    EXPECT_EQ(ReadFile(path), *GzipChunk(Game(options, game)));
  }
  EXPECT_EQ(files->raw_bytes, files->positions * kV5RecordSize);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 3);  // no temps
}

TEST(DataGeneratorTest, TarsAreIndexedAndReadableByGnuTar) {
  const GeneratorOptions options{.seed = 4, .input_format = 3};
  const fs::path dir = FreshDir("tar");
  absl::StatusOr<GeneratedFiles> files = WriteGames(
      options,
      {.mode = OutputMode::kTar, .dir = dir, .games = 5, .games_per_tar = 2});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->paths, (std::vector<std::string>{
                              dir / "training-run1-test80-20250101-0000.tar",
                              dir / "training-run1-test80-20250101-0100.tar",
                              dir / "training-run1-test80-20250101-0200.tar"}));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 3);  // no temps
  int game = 0;
  for (const std::string& path : files->paths) {
    int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    absl::StatusOr<io::TarIndex> index =
        io::IndexTarFile(fd, fs::file_size(path));
    ASSERT_TRUE(index.ok()) << index.status();
    EXPECT_TRUE(index->error.ok()) << index->error;
    std::string listing;
    for (const io::TarMember& member : index->members) {
      EXPECT_EQ(member.name,
                absl::StrCat("training.", kFirstGameId + game, ".gz"));
      std::string bytes(member.size, '\0');
      ASSERT_EQ(pread(fd, bytes.data(), bytes.size(), member.data_offset),
                static_cast<ssize_t>(bytes.size()));
      EXPECT_EQ(bytes, *GzipChunk(Game(options, game)));
      listing += member.name + "\n";
      ++game;
    }
    close(fd);

    FILE* tar = popen(absl::StrCat("tar -tf '", path, "'").c_str(), "r");
    ASSERT_NE(tar, nullptr);
    std::string output;
    char buffer[256];
    while (size_t n = fread(buffer, 1, sizeof(buffer), tar)) {
      output.append(buffer, n);
    }
    EXPECT_EQ(pclose(tar), 0);
    EXPECT_EQ(output, listing);
  }
  EXPECT_EQ(game, 5);
}

}  // namespace
}  // namespace sluice::lc0
