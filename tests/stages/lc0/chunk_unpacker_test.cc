#include "stages/lc0/chunk_unpacker.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/data_loader.h"
#include "engine/metrics_accumulator.h"
#include "engine/stable_hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/lc0/format/record_upconvert.h"
#include "tests/stages/lc0/chunk_test_util.h"
#include "tests/stages/lc0/frame_test_util.h"

namespace sluice::lc0 {
namespace {

using ::sluice::lc0::testing::FactoryWithSource;
using ::sluice::lc0::testing::GetRecord;
using ::sluice::lc0::testing::MakeChunk;
using ::sluice::lc0::testing::ParseConfig;
using ::sluice::lc0::testing::RawGame;
using ::sluice::lc0::testing::SetRecord;
using ::sluice::lc0::testing::StageTotals;
using ::sluice::lc0::testing::Unpacked;
using ::testing::HasSubstr;

// What one run of source -> unpacker produced.
struct UnpackRun {
  std::vector<Frame> frames;
  StageMetricProto metrics;  // the unpacker's totals
};

UnpackRun Unpack(std::vector<Chunk> chunks, const std::string& unpacker_config,
                 uint64_t seed = 1) {
  DataLoader loader(FactoryWithSource("source", std::move(chunks)));
  loader.Configure(ParseConfig(absl::StrCat("seed: ", seed, R"pb(
                                              worker_threads: 2
                                              stage {
                                                name: "source"
                                                counting_source {}
                                              }
                                              stage { name: "unpacker"
                                                      input: "source"
                                                      chunk_unpacker {)pb",
                                            unpacker_config, "} }")));
  loader.Start();
  UnpackRun run;
  while (std::optional<Frame> frame = loader.GetNext<Frame>()) {
    run.frames.push_back(std::move(*frame));
  }
  loader.Stop();
  run.metrics = StageTotals(loader, "unpacker");
  return run;
}

TEST(ChunkUnpackerTest, ConfigErrorsNameStageAndField) {
  for (const auto& [config, field] :
       std::vector<std::pair<std::string, std::string>>{
           {"parallelism: 0", "chunk_unpacker.parallelism"},
           {"max_decompressed_bytes: 0",
            "chunk_unpacker.max_decompressed_bytes"},
           {"input_format: 6", "chunk_unpacker.input_format"},
           {"position_sampling_rate: 0",
            "chunk_unpacker.position_sampling_rate"},
           {"position_sampling_rate: 1.5",
            "chunk_unpacker.position_sampling_rate"},
           {"diff_focus { min: 2 }", "chunk_unpacker.diff_focus"}}) {
    DataLoader loader(FactoryWithSource("source", std::vector<Chunk>()));
    try {
      loader.Configure(ParseConfig(absl::StrCat(
          R"pb(stage {
                 name: "source"
                 counting_source {}
               }
               stage { name: "unpacker" input: "source" chunk_unpacker {)pb",
          config, "} }")));
      ADD_FAILURE() << "accepted " << config;
    } catch (const ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr("'unpacker'"));
      EXPECT_THAT(error.what(), HasSubstr(field));
    }
  }
}

TEST(ChunkUnpackerTest, UnpacksEveryRecordOfEveryVersion) {
  for (int version : {3, 4, 5, 6}) {
    const std::string raw = RawGame(0, version);
    const Chunk chunk = MakeChunk(raw, 7);
    const uint64_t id = chunk.id();
    const UnpackRun run = Unpack({chunk}, "");
    const size_t records =
        raw.size() / RecordSize(static_cast<RecordVersion>(version));
    ASSERT_EQ(run.frames.size(), records) << version;
    for (const Frame& frame : run.frames) {
      EXPECT_EQ(frame.game_id, id);
      EXPECT_EQ(frame.record.version(), static_cast<uint32_t>(version));
      EXPECT_EQ(frame.record.input_format(), 1u);
    }
    EXPECT_EQ(run.metrics.chunk_unpacker().records(), records);
    EXPECT_EQ(run.metrics.chunk_unpacker().frames_emitted(), records);
    EXPECT_EQ(run.metrics.chunk_unpacker().decompressed_bytes(), raw.size());
    EXPECT_EQ(run.metrics.skipped_size(), 0);
  }
}

// One crafted chunk per reason; each is counted once under its name.
TEST(ChunkUnpackerTest, EveryRejectionReasonCounted) {
  const std::string good = RawGame(1);
  const size_t records = good.size() / kV6RecordSize;
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  using Edit = void (*)(V6TrainingRecord&);
  const std::vector<std::pair<std::string, Edit>> record_edits = {
      {"version_mismatch", [](V6TrainingRecord& r) { r.version = 5; }},
      {"unexpected_input_format",
       [](V6TrainingRecord& r) { r.input_format = 3; }},
      {"nonfinite_probability",
       [](V6TrainingRecord& r) { r.probabilities[0] = INFINITY; }},
      {"negative_probability",
       [](V6TrainingRecord& r) { r.probabilities[0] = -0.5f; }},
      {"probability_sum",
       [](V6TrainingRecord& r) {
         for (float& p : r.probabilities) p = p > 0 ? p * 2 : p;
       }},
      {"nan_field", [](V6TrainingRecord& r) { r.root_q = kNan; }},
      {"best_q_range", [](V6TrainingRecord& r) { r.best_q = 1.5f; }},
      {"result_q_range", [](V6TrainingRecord& r) { r.result_q = -2.0f; }},
      {"best_d_range", [](V6TrainingRecord& r) { r.best_d = -0.1f; }},
      {"result_d_range", [](V6TrainingRecord& r) { r.result_d = 1.1f; }},
      {"negative_plies_left", [](V6TrainingRecord& r) { r.plies_left = -1; }},
  };
  std::vector<Chunk> chunks;
  for (const auto& [reason, edit] : record_edits) {
    std::string raw = good;
    V6TrainingRecord record = GetRecord(raw, 3);
    edit(record);
    SetRecord(&raw, 3, record);
    chunks.push_back(MakeChunk(raw, chunks.size()));
  }
  // invalid_result applies to pre-V6 records: a V5 chunk.
  std::string v5 = RawGame(2, 5);
  v5[kV5RecordSize + offsetof(V6TrainingRecord, result)] = 7;  // record 1
  chunks.push_back(MakeChunk(v5, chunks.size()));
  // Chunk-level.
  chunks.push_back(MakeChunk("", chunks.size()));  // empty_chunk
  std::string unknown = good;
  unknown[0] = 9;
  chunks.push_back(MakeChunk(unknown, chunks.size()));
  chunks.push_back(MakeChunk(good.substr(0, good.size() - 1), chunks.size()));
  Chunk not_gzip = MakeChunk(good, chunks.size());
  not_gzip.data[0] = 'x';
  chunks.push_back(not_gzip);
  Chunk corrupt = MakeChunk(good, chunks.size());
  corrupt.data.resize(corrupt.data.size() / 2);
  chunks.push_back(corrupt);
  Chunk bomb = MakeChunk(std::string(4 << 20, '\0'), chunks.size());
  chunks.push_back(bomb);

  const UnpackRun run =
      Unpack(std::move(chunks), "max_decompressed_bytes: 3145728");
  std::map<std::string, uint64_t> expected;
  for (const auto& [reason, edit] : record_edits) expected[reason] = 1;
  for (const char* reason :
       {"invalid_result", "empty_chunk", "unknown_version", "size_not_multiple",
        "not_gzip", "corrupt_gzip", "decompressed_too_large"}) {
    expected[reason] = 1;
  }
  const std::map<std::string, uint64_t> skipped = SkippedByReason(run.metrics);
  EXPECT_EQ(skipped, expected);
  // Bad records are dropped alone: the rest of their chunk goes through.
  const size_t v5_records = v5.size() / kV5RecordSize;
  EXPECT_EQ(run.frames.size(),
            record_edits.size() * (records - 1) + (v5_records - 1));
  EXPECT_EQ(run.metrics.chunk_unpacker().chunks_received(),
            record_edits.size() + 7);
}

// A chunk that fails only at its end (its CRC, its size) yields nothing and
// counts only its one reason, not its bad records too.
TEST(ChunkUnpackerTest, AChunkThatFailsAtItsEndYieldsNothingElse) {
  std::string raw = RawGame(4);
  V6TrainingRecord record = GetRecord(raw, 0);
  record.input_format = 3;  // a bad record
  SetRecord(&raw, 0, record);
  Chunk bad_crc = MakeChunk(raw, 0);
  bad_crc.data[bad_crc.data.size() - 8] ^= 1;
  const Chunk short_by_one = MakeChunk(raw.substr(0, raw.size() - 1), 1);

  const UnpackRun run = Unpack({bad_crc, short_by_one}, "");
  EXPECT_TRUE(run.frames.empty());
  EXPECT_EQ(SkippedByReason(run.metrics),
            (std::map<std::string, uint64_t>{{"corrupt_gzip", 1},
                                             {"size_not_multiple", 1}}));
  EXPECT_EQ(run.metrics.chunk_unpacker().frames_emitted(), 0u);
  EXPECT_EQ(run.metrics.chunk_unpacker().positions_sampled_out(), 0u);
}

// Keys of the positions kept: (game id, plies_left and probabilities' hash
// stand for the record).
std::multiset<std::pair<uint64_t, uint64_t>> Kept(const UnpackRun& run) {
  std::multiset<std::pair<uint64_t, uint64_t>> kept;
  for (const Frame& frame : run.frames) {
    const V6TrainingRecord record = Unpacked(frame);
    kept.emplace(frame.game_id,
                 Fnv1a64(std::string_view(
                     reinterpret_cast<const char*>(&record), sizeof(record))));
  }
  return kept;
}

std::vector<Chunk> GeneratedChunks(int count) {
  std::vector<Chunk> chunks;
  for (int i = 0; i < count; ++i) chunks.push_back(MakeChunk(RawGame(i), i));
  return chunks;
}

TEST(ChunkUnpackerTest, SamplingRateWithinToleranceAndSeedReproducible) {
  const std::vector<Chunk> chunks = GeneratedChunks(100);
  const std::string config = "parallelism: 3 position_sampling_rate: 0.25";
  const UnpackRun a = Unpack(chunks, config, /*seed=*/3);
  const double total = a.metrics.chunk_unpacker().records();
  ASSERT_GT(total, 100 * kMinGamePositions);
  const double kept = a.frames.size();
  const double expected = 0.25 * total;
  const double sigma = std::sqrt(total * 0.25 * 0.75);
  EXPECT_NEAR(kept, expected, 5 * sigma) << "of " << total;
  EXPECT_EQ(a.metrics.chunk_unpacker().positions_sampled_out() + kept, total);
  // Same seed: the same positions, whatever the parallelism and order.
  EXPECT_EQ(Kept(Unpack(chunks, "position_sampling_rate: 0.25", 3)), Kept(a));
  EXPECT_NE(Kept(Unpack(chunks, config, 4)), Kept(a));
  // A later pass of the pool over the same chunks draws afresh.
  std::vector<Chunk> second_pass = chunks;
  for (Chunk& chunk : second_pass) chunk.pass = 1;
  EXPECT_NE(Kept(Unpack(second_pass, config, 3)), Kept(a));
}

TEST(ChunkUnpackerTest, FixedPositionCountPerChunk) {
  const UnpackRun run = Unpack(GeneratedChunks(20), "position_count: 8");
  std::map<uint64_t, int> per_game;
  for (const Frame& frame : run.frames) ++per_game[frame.game_id];
  EXPECT_EQ(per_game.size(), 20u);
  for (const auto& [game, count] : per_game) EXPECT_EQ(count, 8);
}

TEST(ChunkUnpackerTest, DiffFocusKeepsAccordingToTheFormula) {
  // min 0, slope 0: keep probability 0 except where the formula is
  // bypassed (orig_q NaN or policy_kld 0), which is always kept.
  const std::vector<Chunk> chunks = GeneratedChunks(10);
  const UnpackRun run = Unpack(chunks, "diff_focus { min: 0 slope: 0 }");
  uint64_t bypassed = 0;
  for (const Chunk& chunk : chunks) {
    const std::string raw = RawGame(chunk.index_in_source);
    for (size_t i = 0; i < raw.size() / kV6RecordSize; ++i) {
      const V6TrainingRecord r = GetRecord(raw, i);
      if (std::isnan(r.orig_q) || r.policy_kld == 0.0f) ++bypassed;
    }
  }
  EXPECT_EQ(run.frames.size(), bypassed);
  EXPECT_LT(bypassed, run.metrics.chunk_unpacker().records());  // some dropped
  for (const Frame& frame : run.frames) {
    const V6TrainingRecord record = Unpacked(frame);
    EXPECT_TRUE(std::isnan(record.orig_q) || record.policy_kld == 0.0f);
  }
}

}  // namespace
}  // namespace sluice::lc0
