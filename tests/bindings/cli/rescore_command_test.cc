#include "bindings/cli/rescore_command.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "engine/stable_hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/gzip.h"

namespace sluice::cli {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;
const fs::path kData = "tests/data/rescorer";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// expected.tsv's FNV-1a 64 of each file of lc0's run `run`.
std::map<std::string, uint64_t> ExpectedHashes(const std::string& run) {
  std::map<std::string, uint64_t> hashes;
  std::ifstream in(kData / "expected.tsv");
  std::string name, file, hash;
  size_t records;
  while (in >> name >> file >> records >> hash) {
    if (name == run) hashes[file] = std::stoull(hash, nullptr, 16);
  }
  return hashes;
}

int RunCommand(const std::vector<std::string>& args, std::string* out,
               std::string* err) {
  std::ostringstream o, e;
  const int code = RunRescoreCommand(args, o, e);
  *out = o.str();
  *err = e.str();
  return code;
}

// As lc0's `rescorer rescore --input=IN --output=OUT --syzygy-paths=T
// --deblunder ...`: the same files out, gzip'ed, byte for byte lc0's
// records; the inputs untouched.
TEST(RescoreCommandTest, RescoresADirectoryAsLc0) {
  const fs::path out_dir = fs::temp_directory_path() / "sluice_rescore_cli";
  fs::remove_all(out_dir);
  std::map<std::string, std::string> inputs;
  for (const auto& entry : fs::directory_iterator(kData / "input")) {
    inputs[entry.path().filename().string()] = ReadFile(entry.path());
  }
  std::string out, err;
  ASSERT_EQ(RunCommand(
                {(kData / "input").string(), out_dir.string(), "--syzygy-paths",
                 (kData / "tables").string(), "--deblunder-threshold", "0.1",
                 "--deblunder-width", "0.03", "--threads", "2"},
                &out, &err),
            0)
      << err;
  EXPECT_THAT(out, HasSubstr("files: 59 read, 59 written"));
  const std::map<std::string, uint64_t> expected =
      ExpectedHashes("rescored_deblunder");
  ASSERT_EQ(expected.size(), 59u);
  for (const auto& [name, hash] : expected) {
    absl::StatusOr<std::string> records =
        io::Gunzip(ReadFile(out_dir / name), 1 << 26);
    ASSERT_TRUE(records.ok()) << name;
    EXPECT_EQ(Fnv1a64(*records), hash) << name;
  }
  for (const auto& [name, bytes] : inputs) {
    EXPECT_EQ(ReadFile(kData / "input" / name), bytes) << name;
  }
  fs::remove_all(out_dir);
}

TEST(RescoreCommandTest, RefusedGamesAreReportedAndTheRunGoesOn) {
  const fs::path out_dir = fs::temp_directory_path() / "sluice_rescore_legacy";
  fs::remove_all(out_dir);
  std::string out, err;
  ASSERT_EQ(
      RunCommand({(kData / "input_legacy_transpose").string(), out_dir.string(),
                  "--syzygy-paths", (kData / "tables").string()},
                 &out, &err),
      0);
  EXPECT_THAT(err, HasSubstr("played_move_not_listed"));
  EXPECT_THAT(out, HasSubstr("files: 6 read, 0 written"));
  EXPECT_THAT(out, HasSubstr("refused: played_move_not_listed 6"));
  fs::remove_all(out_dir);
}

TEST(RescoreCommandTest, UsageAndStartErrors) {
  std::string out, err;
  EXPECT_EQ(RunCommand({"--help"}, &out, &err), 0);
  EXPECT_THAT(out, HasSubstr("--syzygy-paths"));
  EXPECT_EQ(RunCommand({"a", "b"}, &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("--syzygy-paths is required"));
  EXPECT_EQ(RunCommand({(kData / "input").string(), "/tmp/sluice_rescore_x",
                        "--syzygy-paths", "/nonexistent/tables"},
                       &out, &err),
            1);
  EXPECT_THAT(err, HasSubstr("/nonexistent/tables"));
  EXPECT_EQ(RunCommand({(kData / "input").string(), "/tmp/sluice_rescore_x",
                        "--syzygy-paths", (kData / "tables").string(),
                        "--temperature", "0"},
                       &out, &err),
            2);
  EXPECT_THAT(err, HasSubstr("temperature"));
  EXPECT_EQ(RunCommand({(kData / "input").string(), "/tmp/sluice_rescore_x",
                        "--syzygy-paths", (kData / "tables").string(),
                        "--new-input-format", "2"},
                       &out, &err),
            2);
}

}  // namespace
}  // namespace sluice::cli
