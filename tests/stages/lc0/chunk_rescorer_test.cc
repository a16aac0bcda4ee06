#include "stages/lc0/chunk_rescorer.h"

#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/data_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/lc0/default_pipeline.h"
#include "tests/stages/lc0/chunk_test_util.h"
#include "tests/stages/lc0/frame_test_util.h"
#include "tests/stages/lc0/rescorer/rescorer_test_data.h"

namespace sluice::lc0 {
namespace {

using ::sluice::lc0::testing::FactoryWithSource;
using ::sluice::lc0::testing::GetRecord;
using ::sluice::lc0::testing::MakeChunk;
using ::sluice::lc0::testing::ParseConfig;
using ::sluice::lc0::testing::SetRecord;
using ::sluice::lc0::testing::StageTotals;
using ::testing::HasSubstr;

std::string TablesDir() {
  return (rescorer::testing::RescorerDataDir() / "tables").string();
}

struct RescoreRun {
  std::vector<Chunk> chunks;
  StageMetricProto metrics;  // the rescorer's totals
};

// A pipeline: `header` fields, source -> rescorer (chunk_rescorer with the
// test tables and `options`), then `more_stages`. Plain strings, so that
// clang-format leaves the text format alone.
std::string PipelineText(const std::string& header, const std::string& options,
                         const std::string& more_stages = "") {
  return absl::StrCat(header,
                      " stage { name: \"source\" counting_source {} }"
                      " stage { name: \"rescorer\" input: \"source\""
                      " chunk_rescorer { syzygy_paths: \"",
                      TablesDir(), "\" ", options, " } } ", more_stages);
}

// source -> rescorer (`options` inside chunk_rescorer { ... }).
RescoreRun Rescore(std::vector<Chunk> chunks, const std::string& options,
                   bool deterministic = false) {
  DataLoader loader(FactoryWithSource("source", std::move(chunks)));
  loader.Configure(
      ParseConfig(PipelineText(absl::StrCat("worker_threads: 2 deterministic: ",
                                            deterministic ? "true" : "false"),
                               options)));
  loader.Start();
  RescoreRun run;
  while (std::optional<Chunk> chunk = loader.GetNext<Chunk>()) {
    run.chunks.push_back(std::move(*chunk));
  }
  loader.Stop();
  run.metrics = StageTotals(loader, "rescorer");
  return run;
}

std::vector<rescorer::testing::GameFile> Games() {
  return rescorer::testing::ReadGames(rescorer::testing::RescorerDataDir() /
                                      "input");
}

TEST(ChunkRescorerTest, ConfigErrorsNameStageAndField) {
  const std::string tables =
      absl::StrCat("syzygy_paths: \"", TablesDir(), "\" ");
  for (const auto& [config, field] :
       std::vector<std::pair<std::string, std::string>>{
           {"", "chunk_rescorer.syzygy_paths"},
           {"syzygy_paths: \"/nonexistent/tables\"",
            "chunk_rescorer.syzygy_paths"},
           {tables + "parallelism: 0", "chunk_rescorer.parallelism"},
           {tables + "temperature: 0", "chunk_rescorer.temperature"},
           {tables + "dist_offset: 0.5", "chunk_rescorer.dist_offset"},
           {tables + "dtz_policy_boost: 2", "chunk_rescorer.dtz_policy_boost"},
           {tables + "new_input_format: 2", "chunk_rescorer.new_input_format"},
           {tables + "output_version: 5", "chunk_rescorer.output_version"},
           {tables + "deblunder { threshold: 3 }",
            "chunk_rescorer.deblunder.threshold"}}) {
    DataLoader loader(FactoryWithSource("source", std::vector<Chunk>()));
    try {
      loader.Configure(ParseConfig(absl::StrCat(
          R"pb(stage {
                 name: "source"
                 counting_source {}
               }
               stage { name: "rescorer" input: "source" chunk_rescorer {)pb",
          config, "} }")));
      ADD_FAILURE() << "accepted " << config;
    } catch (const ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr("'rescorer'"));
      EXPECT_THAT(error.what(), HasSubstr(field));
    }
  }
}

TEST(ChunkRescorerTest, MissingPathIsNamed) {
  DataLoader loader(FactoryWithSource("source", std::vector<Chunk>()));
  try {
    loader.Configure(ParseConfig(
        R"pb(stage {
               name: "source"
               counting_source {}
             }
             stage {
               name: "rescorer"
               input: "source"
               chunk_rescorer { syzygy_paths: "/nonexistent/tables" }
             })pb"));
    ADD_FAILURE() << "accepted a missing path";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("/nonexistent/tables"));
  }
}

// In deterministic mode with parallel coroutines every game comes out in
// order, rescored exactly as GameRescorer does, decompressed.
TEST(ChunkRescorerTest, RescoresEveryGameInOrder) {
  const std::vector<rescorer::testing::GameFile> games = Games();
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < games.size(); ++i) {
    chunks.push_back(MakeChunk(games[i].records, i));
  }
  const RescoreRun run =
      Rescore(chunks, "deblunder { threshold: 0.1 width: 0.03 } parallelism: 3",
              /*deterministic=*/true);
  ASSERT_EQ(run.chunks.size(), games.size());
  const rescorer::GameRescorer direct(rescorer::testing::LoadRescorerTables(),
                                      {.deblunder = true,
                                       .deblunder_threshold = 0.1f,
                                       .deblunder_width = 0.03f});
  uint64_t positions = 0;
  for (size_t i = 0; i < games.size(); ++i) {
    EXPECT_EQ(run.chunks[i].index_in_source, i);
    EXPECT_TRUE(run.chunks[i].decompressed);
    std::string expected;
    rescorer::RescoreCounts counts;
    ASSERT_FALSE(direct.Rescore(games[i].records, &expected, &counts));
    EXPECT_TRUE(run.chunks[i].data == expected) << games[i].name;
    positions += counts.positions;
  }
  const ChunkRescorerMetricsProto& metrics = run.metrics.chunk_rescorer();
  EXPECT_EQ(metrics.games(), games.size());
  EXPECT_EQ(metrics.positions(), positions);
  EXPECT_GT(metrics.positions_probed(), 0u);
  EXPECT_GT(metrics.results_changed(), 0u);
  EXPECT_GT(metrics.dtz_decisions(), 0u);
  EXPECT_GT(metrics.blunders(), 0u);
  EXPECT_EQ(metrics.records_dropped(), 4u);
  EXPECT_EQ(run.metrics.skipped_size(), 0);
}

// Bad games are dropped and counted by the check that refused them; the
// good one beside them passes.
TEST(ChunkRescorerTest, RefusedGamesAreCountedByReason) {
  const std::vector<rescorer::testing::GameFile> games = Games();
  const std::string good = games[0].records;
  std::vector<Chunk> chunks;
  chunks.push_back(MakeChunk(good, 0));
  // A policy that does not sum to one (each entry still in [0, 1]).
  std::string bad_sum = good;
  V6TrainingRecord record = GetRecord(bad_sum, 3);
  for (float& p : record.probabilities) {
    if (p > 0) p /= 2;
  }
  SetRecord(&bad_sum, 3, record);
  chunks.push_back(MakeChunk(bad_sum, 1));
  // played_idx naming another legal move (an illegal one fails the range
  // check first, as in lc0).
  std::string wrong_played = good;
  record = GetRecord(wrong_played, 2);
  uint16_t other = 0;
  while (other == record.played_idx || record.probabilities[other] < 0) {
    ++other;
  }
  record.played_idx = other;
  SetRecord(&wrong_played, 2, record);
  chunks.push_back(MakeChunk(wrong_played, 2));
  // Two records that no move connects (record 1 dropped).
  std::string jump =
      good.substr(0, kV6RecordSize) + good.substr(2 * kV6RecordSize);
  chunks.push_back(MakeChunk(jump, 3));
  // A truncated chunk, input format 2, not gzip.
  chunks.push_back(MakeChunk(good.substr(0, good.size() - 100), 4));
  std::string format2 = good;
  for (size_t i = 0; i * kV6RecordSize < format2.size(); ++i) {
    record = GetRecord(format2, i);
    record.input_format = 2;
    SetRecord(&format2, i, record);
  }
  chunks.push_back(MakeChunk(format2, 5));
  Chunk not_gzip = MakeChunk(good, 6);
  not_gzip.data = ChunkBytes(std::string_view("not a gzip stream"));
  chunks.push_back(std::move(not_gzip));
  // A game of one record: rescored (nothing to probe).
  chunks.push_back(MakeChunk(good.substr(0, kV6RecordSize), 7));
  const RescoreRun run = Rescore(chunks, "parallelism: 2");
  ASSERT_EQ(run.chunks.size(), 2u);
  std::map<std::string, uint64_t> skipped;
  for (const SkipCountProto& skip : run.metrics.skipped()) {
    skipped[skip.reason()] = skip.count();
  }
  // The wrong played_idx, and the missing record (no move leads there, or
  // the one that fits is not the one played).
  EXPECT_EQ(skipped["played_move_not_listed"] + skipped["played_move_illegal"],
            2u);
  EXPECT_GE(skipped["played_move_not_listed"], 1u);
  skipped.erase("played_move_not_listed");
  skipped.erase("played_move_illegal");
  EXPECT_EQ(skipped,
            (std::map<std::string, uint64_t>{{"probability_sum_error", 1},
                                             {"size_not_multiple", 1},
                                             {"input_format_not_rescored", 1},
                                             {"not_gzip", 1}}));
  EXPECT_EQ(run.metrics.chunk_rescorer().games(), 2u);
}

// Through the unpacker: rescored chunks become frames without a second
// gunzip; V7 output keeps the records marked for deletion.
TEST(ChunkRescorerTest, FeedsTheUnpacker) {
  const std::vector<rescorer::testing::GameFile> games = Games();
  std::vector<Chunk> chunks;
  size_t records = 0;
  for (size_t i = 0; i < games.size(); ++i) {
    chunks.push_back(MakeChunk(games[i].records, i));
    records += games[i].records.size() / kV6RecordSize;
  }
  DataLoader loader(FactoryWithSource("source", std::move(chunks)));
  loader.Configure(
      ParseConfig(PipelineText("worker_threads: 2", "",
                               "stage { name: \"unpacker\" input: \"rescorer\""
                               " chunk_unpacker { input_format: 1 } }")));
  loader.Start();
  size_t frames = 0;
  while (std::optional<Frame> frame = loader.GetNext<Frame>()) ++frames;
  loader.Stop();
  // Format-3 records are dropped by an input_format 1 unpacker; the V6
  // output drops g30's two records marked for deletion per file.
  const StageMetricProto unpacker = StageTotals(loader, "unpacker");
  EXPECT_EQ(unpacker.chunk_unpacker().records(), records - 4);
  EXPECT_GT(frames, 0u);
  EXPECT_LT(frames, records);
}

// V7 output through the unpacker and the tensor generator: the four V7
// fields become tensors, equal to the rescorer's records.
TEST(ChunkRescorerTest, VersionSevenFieldsBecomeTensors) {
  const std::vector<rescorer::testing::GameFile> games = Games();
  std::vector<Chunk> chunks;
  const rescorer::GameRescorer direct(rescorer::testing::LoadRescorerTables(),
                                      {.output_version = 7});
  size_t records = 0;
  std::vector<V7Tail> tails;
  for (size_t i = 0; i < games.size(); ++i) {
    if (!games[i].name.ends_with("_f1.gz")) continue;
    chunks.push_back(MakeChunk(games[i].records, i));
    std::string out;
    rescorer::RescoreCounts counts;
    ASSERT_FALSE(direct.Rescore(games[i].records, &out, &counts));
    for (size_t r = 0; r * kV7RecordSize < out.size(); ++r) {
      V7Tail tail;
      std::memcpy(&tail, out.data() + r * kV7RecordSize + kV7TailOffset,
                  sizeof(tail));
      tails.push_back(tail);
    }
    records += out.size() / kV7RecordSize;
  }
  DataLoader loader(FactoryWithSource("source", std::move(chunks)));
  loader.Configure(ParseConfig(
      PipelineText("worker_threads: 2 deterministic: true", "output_version: 7",
                   "stage { name: \"unpacker\" input: \"rescorer\""
                   " chunk_unpacker { input_format: 1 } }"
                   " stage { name: \"tensors\" input: \"unpacker\""
                   " tensor_generator { batch_size: 64 input_format: 1 "
                   "v7_fields: true } }")));
  loader.Start();
  size_t positions = 0;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>()) {
    ASSERT_EQ(batch->tensors().size(), 9u);
    const float* q_st = batch->Find("q_st")->As<float>();
    const float* d_st = batch->Find("d_st")->As<float>();
    const float* opp = batch->Find("opp_played_idx")->As<float>();
    const float* next = batch->Find("next_played_idx")->As<float>();
    for (size_t slot = 0; slot < batch->size(); ++slot) {
      // Deterministic, no sampler: the records in order.
      const V7Tail& tail = tails[positions + slot];
      EXPECT_EQ(q_st[slot], tail.q_st);
      EXPECT_EQ(d_st[slot], tail.d_st);
      EXPECT_EQ(opp[slot], tail.opp_played_idx);
      EXPECT_EQ(next[slot], tail.next_played_idx);
    }
    positions += batch->size();
  }
  loader.Stop();
  EXPECT_EQ(positions, records);
}

TEST(ChunkRescorerTest, DefaultPipelineTakesARescorer) {
  ChunkRescorerConfig rescore;
  rescore.add_syzygy_paths(TablesDir());
  rescore.mutable_deblunder()->set_threshold(0.1f);
  absl::StatusOr<DataLoaderConfig> config =
      MakePipeline({.directories = {"/data"}, .rescore = rescore});
  ASSERT_TRUE(config.ok()) << config.status();
  int rescorer = -1;
  for (int i = 0; i < config->stage_size(); ++i) {
    if (config->stage(i).name() == "rescorer") rescorer = i;
  }
  ASSERT_GE(rescorer, 0);
  EXPECT_EQ(config->stage(rescorer).input(0), "pool");
  EXPECT_TRUE(config->stage(rescorer + 1).has_chunk_unpacker());
  EXPECT_EQ(config->stage(rescorer + 1).input(0), "rescorer");
  EXPECT_EQ(config->stage(rescorer).chunk_rescorer().deblunder().threshold(),
            0.1f);
}

}  // namespace
}  // namespace sluice::lc0
