// Elastic resume (Pipeline::Resume with the checkpoints of every rank of a
// run, on another number of ranks) of whole pipelines in deterministic
// mode, for N -> M in {1->2, 2->1, 2->3, 3->2, 4->1} (2->3 and 4->1 under a
// sanitizer): an eval pass delivers every example that no old rank
// delivered exactly once across the new ranks, with damaged input skipped
// and a file gone and one new since the checkpoint (the gone file's
// examples not yet delivered are counted); a training pass repeats no
// example within the interrupted pass; the resumed batches depend only on
// the checkpoints, the config and M, and a resumed run checkpoints and
// resumes again; random rank counts and cut points keep the eval promise;
// checkpoints that are not every rank's of one run, or of another config,
// are refused, naming what differs. Both workloads: lc0 and Arrow/audio.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/data_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/reliability/batch_hashes.h"
#include "tests/reliability/checkpoint_workloads.h"
#include "tests/testing/pipeline_test_util.h"
#include "tests/testing/sanitizers.h"

namespace sluice {
namespace {

using ::sluice::testing::CheckpointWorkload;
using ::sluice::testing::Pass;
using ::sluice::testing::Refusal;
using ::testing::AllOf;
using ::testing::HasSubstr;

struct RankCounts {
  uint32_t old_ranks;
  uint32_t new_ranks;
};
// Every rank's checkpoints of a run.
using Ranks = std::vector<std::string>;

constexpr RankCounts kEveryRankCount[] = {
    {1, 2}, {2, 1}, {2, 3}, {3, 2}, {4, 1}};
// Under a sanitizer (ten times slower) one growth and one shrink: the same
// merges and splits of checkpoints, the same threads.
constexpr RankCounts kSanitizedRankCounts[] = {{2, 3}, {4, 1}};
constexpr std::span<const RankCounts> kRankCounts =
    testing::kUnderSanitizer ? std::span<const RankCounts>(kSanitizedRankCounts)
                             : std::span<const RankCounts>(kEveryRankCount);

DataLoaderConfig OfRank(DataLoaderConfig config, uint32_t rank,
                        uint32_t world_size) {
  config.set_rank(rank);
  config.set_world_size(world_size);
  return config;
}

std::vector<uint64_t> Sorted(std::vector<uint64_t> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

bool HasRepeats(const std::vector<uint64_t>& sorted) {
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

bool Includes(const std::vector<uint64_t>& sorted,
              const std::vector<uint64_t>& sorted_part) {
  return std::includes(sorted.begin(), sorted.end(), sorted_part.begin(),
                       sorted_part.end());
}

// What the old ranks delivered, and their checkpoints (by rank).
struct OldRun {
  std::vector<uint64_t> rows;
  std::vector<std::string> checkpoints;
};

// Rank k of cuts.size() takes cuts[k] batches (rows, RowIds by
// `id_field`), then checkpoints.
OldRun RunOldRanks(const DataLoaderConfig& config,
                   const std::vector<size_t>& cuts,
                   std::string_view id_field = "") {
  OldRun run;
  const auto ranks = static_cast<uint32_t>(cuts.size());
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    RunningLoader loader(OfRank(config, rank, ranks));
    if (cuts[rank] > 0) {  // TakeRows(0) would take every batch
      const std::vector<uint64_t> rows = loader.TakeRows(cuts[rank], id_field);
      run.rows.insert(run.rows.end(), rows.begin(), rows.end());
    }
    run.checkpoints.push_back(loader.Checkpoint());
  }
  return run;
}

// The rows every one of `ranks` new ranks delivers from `checkpoints`, up
// to `batches` each (0: to the end of the stream), and the skips they
// counted under `reason`; rows named as by RunOldRanks.
struct NewRun {
  std::vector<uint64_t> rows;
  uint64_t skips = 0;
};
NewRun RunNewRanks(const DataLoaderConfig& config, uint32_t ranks,
                   const std::vector<std::string>& checkpoints, size_t batches,
                   const std::string& reason, std::string_view id_field = "") {
  NewRun run;
  for (uint32_t rank = 0; rank < ranks; ++rank) {
    RunningLoader loader(OfRank(config, rank, ranks), checkpoints);
    const std::vector<uint64_t> rows = loader.TakeRows(batches, id_field);
    run.rows.insert(run.rows.end(), rows.begin(), rows.end());
    run.skips += testing::SkipsCounted(loader.loader().GetMetrics(), reason);
  }
  return run;
}

class ElasticResumeTest : public ::testing::TestWithParam<CheckpointWorkload> {
 protected:
  // A fresh data set, with a damaged file.
  std::unique_ptr<testing::TempDir> WriteData() const {
    auto dir = std::make_unique<testing::TempDir>();
    GetParam().write(dir->path());
    GetParam().write_damaged(dir->path());
    return dir;
  }

  DataLoaderConfig Config(const std::string& dir, Pass pass) const {
    return GetParam().config(dir, pass);
  }

  // Every row of one eval pass over the files in `dir`, sorted, named as
  // by RunOldRanks.
  std::vector<uint64_t> EvalRows(const std::string& dir,
                                 std::string_view id_field = "") const {
    return Sorted(
        RunningLoader(Config(dir, Pass::kEval)).TakeRows(0, id_field));
  }

  // Removes the data set's last file and writes another one (`number` for
  // write_another, larger than any written before).
  void ChangeFiles(const std::string& dir, int number = 1) const {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 3u);
    std::filesystem::remove(files.back());
    GetParam().write_another(dir, number);
  }
};

TEST_P(ElasticResumeTest, EvalDeliversWhatNoOldRankDeliveredExactlyOnce) {
  for (const RankCounts counts : kRankCounts) {
    SCOPED_TRACE(::testing::Message()
                 << counts.old_ranks << " -> " << counts.new_ranks << " ranks");
    const std::unique_ptr<testing::TempDir> dir = WriteData();
    const DataLoaderConfig config = Config(dir->path(), Pass::kEval);
    const std::vector<uint64_t> before_change = EvalRows(dir->path());
    std::vector<size_t> cuts;
    for (uint32_t rank = 0; rank < counts.old_ranks; ++rank) {
      cuts.push_back(1 + rank % 3);
    }
    const OldRun old = RunOldRanks(config, cuts);
    ChangeFiles(dir->path());
    const std::vector<uint64_t> after_change = EvalRows(dir->path());
    // Everything still there arrives (of files new since, when the
    // workload reads them).
    std::vector<uint64_t> expected = after_change;
    if (!GetParam().resume_reads_new_files) {
      expected.clear();
      std::set_intersection(before_change.begin(), before_change.end(),
                            after_change.begin(), after_change.end(),
                            std::back_inserter(expected));
    }
    const NewRun resumed = RunNewRanks(
        config, counts.new_ranks, old.checkpoints, 0, "checkpoint_source_gone");
    std::vector<uint64_t> delivered = old.rows;
    delivered.insert(delivered.end(), resumed.rows.begin(), resumed.rows.end());
    delivered = Sorted(std::move(delivered));
    EXPECT_FALSE(HasRepeats(delivered));
    // Of the file gone, only what had been delivered before.
    EXPECT_TRUE(Includes(delivered, expected));
    std::vector<uint64_t> anywhere;
    std::set_union(before_change.begin(), before_change.end(),
                   after_change.begin(), after_change.end(),
                   std::back_inserter(anywhere));
    EXPECT_TRUE(Includes(anywhere, delivered));
    EXPECT_GT(resumed.skips, 0u) << "the file gone is counted";
  }
}

TEST_P(ElasticResumeTest, TrainingRepeatsNothingWithinTheInterruptedPass) {
  // Every old rank must still be taking in its first pass when it
  // checkpoints (its reservoir, the items emitted and the batches taken
  // from its shard alone): the workload adds files to that end.
  const uint64_t kReservoir = GetParam().elastic_reservoir;
  const int kMoreFiles = GetParam().elastic_more_files;
  for (const RankCounts counts : kRankCounts) {
    SCOPED_TRACE(::testing::Message()
                 << counts.old_ranks << " -> " << counts.new_ranks << " ranks");
    const std::unique_ptr<testing::TempDir> dir = WriteData();
    for (int number = 1; number <= kMoreFiles; ++number) {
      GetParam().write_another(dir->path(), number);
    }
    DataLoaderConfig config = Config(dir->path(), Pass::kTrain);
    testing::SetReservoir(config, kReservoir, kReservoir / 2);
    const std::string& id = GetParam().train_row_id;
    const std::vector<uint64_t> before_change = EvalRows(dir->path(), id);
    const OldRun old =
        RunOldRanks(config, std::vector<size_t>(counts.old_ranks, 2), id);
    ChangeFiles(dir->path(), kMoreFiles + 1);
    const std::vector<uint64_t> after_change = EvalRows(dir->path(), id);
    // The pass: of the checkpoint's files, and of the files new since
    // when the workload reads them.
    std::vector<uint64_t> pass = before_change;
    if (GetParam().resume_reads_new_files) {
      pass.clear();
      std::set_union(before_change.begin(), before_change.end(),
                     after_change.begin(), after_change.end(),
                     std::back_inserter(pass));
    }
    ASSERT_FALSE(HasRepeats(pass)) << "the examples must differ";
    // Within the pass as long as every new rank has examples of it left
    // beyond its reservoir (shards differ by a few percent).
    const size_t batch = old.rows.size() / (2 * counts.old_ranks);
    const size_t left = after_change.size() - old.rows.size();
    const size_t share = left / 2 / counts.new_ranks;
    ASSERT_GE(share, kReservoir + 2 * batch);
    const size_t batches = (share - kReservoir) / batch;
    const NewRun resumed =
        RunNewRanks(config, counts.new_ranks, old.checkpoints, batches, "", id);
    ASSERT_EQ(resumed.rows.size(), counts.new_ranks * batches * batch);
    std::vector<uint64_t> delivered = old.rows;
    delivered.insert(delivered.end(), resumed.rows.begin(), resumed.rows.end());
    delivered = Sorted(std::move(delivered));
    EXPECT_FALSE(HasRepeats(delivered));
    EXPECT_TRUE(Includes(pass, delivered));
  }
}

TEST_P(ElasticResumeTest, BatchesDependOnlyOnCheckpointsConfigAndRankCount) {
  const std::unique_ptr<testing::TempDir> dir = WriteData();
  const DataLoaderConfig config = Config(dir->path(), Pass::kTrain);
  const OldRun old = RunOldRanks(config, {3, 3});
  for (uint32_t rank = 0; rank < 3; ++rank) {
    std::vector<std::vector<uint64_t>> runs;
    for (const Shape& shape : {Shape{1, 1}, Shape{4, 3}}) {
      DataLoaderConfig resumed = OfRank(config, rank, 3);
      SetParallelism(resumed, shape);
      runs.push_back(RunningLoader(resumed, old.checkpoints).Take(6));
    }
    EXPECT_EQ(runs[0].size(), 6u);
    EXPECT_EQ(runs[0], runs[1]) << "rank " << rank;
  }
}

TEST_P(ElasticResumeTest, AResumedRunCheckpointsAndResumesAgain) {
  const std::unique_ptr<testing::TempDir> dir = WriteData();
  const DataLoaderConfig config = Config(dir->path(), Pass::kTrain);
  const OldRun old = RunOldRanks(config, {3, 3});
  // Three ranks resume the two, take 4 batches and checkpoint; rank 1 goes
  // on for 6 more.
  std::vector<std::string> again;
  std::vector<uint64_t> followed;
  for (uint32_t rank = 0; rank < 3; ++rank) {
    RunningLoader loader(OfRank(config, rank, 3), old.checkpoints);
    ASSERT_EQ(loader.Take(4).size(), 4u);
    again.push_back(loader.Checkpoint());
    if (rank == 1) followed = loader.Take(6);
  }
  RunningLoader resumed(OfRank(config, 1, 3), again);
  EXPECT_EQ(resumed.Take(6), followed);
  // And on two ranks again: an eval-like check is not possible in
  // training, but it resumes and delivers.
  EXPECT_EQ(RunningLoader(OfRank(config, 0, 2), again).Take(3).size(), 3u);
}

TEST_P(ElasticResumeTest, RandomRankCountsAndCutsKeepTheEvalPromise) {
  const std::unique_ptr<testing::TempDir> dir = WriteData();
  const DataLoaderConfig config = Config(dir->path(), Pass::kEval);
  const std::vector<uint64_t> every = EvalRows(dir->path());
  std::mt19937 random(7);
  for (int trial = 0; trial < 6; ++trial) {
    const auto old_ranks = static_cast<uint32_t>(1 + random() % 4);
    const auto new_ranks = static_cast<uint32_t>(1 + random() % 4);
    std::vector<size_t> cuts;
    for (uint32_t rank = 0; rank < old_ranks; ++rank) {
      cuts.push_back(random() % 6);  // 0: before any batch
    }
    SCOPED_TRACE(::testing::Message()
                 << old_ranks << " -> " << new_ranks << " ranks, cuts "
                 << ::testing::PrintToString(cuts));
    const OldRun old = RunOldRanks(config, cuts);
    const NewRun resumed =
        RunNewRanks(config, new_ranks, old.checkpoints, 0, "");
    std::vector<uint64_t> delivered = old.rows;
    delivered.insert(delivered.end(), resumed.rows.begin(), resumed.rows.end());
    EXPECT_EQ(Sorted(std::move(delivered)), every);
  }
}

TEST_P(ElasticResumeTest, CheckpointsNotOfEveryRankOfOneRunAreRefused) {
  const std::unique_ptr<testing::TempDir> dir = WriteData();
  const DataLoaderConfig config = Config(dir->path(), Pass::kTrain);
  const OldRun old = RunOldRanks(config, {2, 2});
  const DataLoaderConfig third = OfRank(config, 2, 3);
  EXPECT_EQ(Refusal(third, old.checkpoints), "accepted");
  EXPECT_THAT(
      Refusal(third, Ranks{old.checkpoints[0]}),
      AllOf(HasSubstr("1 checkpoints given"), HasSubstr("rank 0 of 2")));
  EXPECT_THAT(Refusal(third, Ranks{old.checkpoints[1], old.checkpoints[1]}),
              HasSubstr("two checkpoints of rank 1"));
  DataLoaderConfig other_seed = third;
  other_seed.set_seed(other_seed.seed() + 1);
  EXPECT_THAT(Refusal(other_seed, old.checkpoints),
              AllOf(HasSubstr("another config"), HasSubstr("seed")));
  // Another data set: the data directories are part of the config.
  const std::unique_ptr<testing::TempDir> elsewhere = WriteData();
  EXPECT_THAT(Refusal(OfRank(Config(elsewhere->path(), Pass::kTrain), 2, 3),
                      old.checkpoints),
              AllOf(HasSubstr("another config"), HasSubstr("directory")));
  // A rank of another run of another seed.
  DataLoaderConfig reseeded = config;
  reseeded.set_seed(config.seed() + 1);
  const OldRun other = RunOldRanks(reseeded, {1, 1});
  EXPECT_THAT(Refusal(third, Ranks{old.checkpoints[0], other.checkpoints[1]}),
              AllOf(HasSubstr("rank 1 of 2"), HasSubstr("seed")));
  EXPECT_THAT(Refusal(third, Ranks{old.checkpoints[0], "damaged"}),
              HasSubstr("checkpoint 2 of 2"));
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, ElasticResumeTest,
    ::testing::ValuesIn(testing::CheckpointWorkloads()),
    [](const ::testing::TestParamInfo<CheckpointWorkload>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace sluice
