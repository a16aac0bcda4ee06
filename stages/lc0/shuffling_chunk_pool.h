// ShufflingChunkPool: keeps the newest `chunk_pool_size` chunks and hands
// them out in random order, each exactly once per pass. Input: one channel
// of lc0::ChunkSourceItem (unindexed sources); output "output" of
// lc0::Chunk.
//
// Start-up: sources of the initial scan are collected until the end-of-scan
// marker (or the first new file, or the end of the input), sorted by name,
// and indexed newest first, `indexing_parallelism` at a time, until the
// window is full; older ones are never indexed (counted in
// `sources_skipped_at_startup`). Only then does output start. Later sources
// are indexed as they arrive and join the window as the newest; the oldest
// whole sources that fall out of it are dropped (`chunks_dropped`).
//
// Output: a stream shuffler over the window (internal/chunk_window.h) draws
// chunk numbers; reader coroutines read them through the executor's
// io_uring reader in batches (one submission and one resumption per batch),
// `reader_parallelism` reads in flight in all; chunks leave in draw order,
// which makes the output a function of the seed (StageContext::seed() and the
// stage name) and of the arrival of sources, whatever the thread count. When a
// pass ends, a new one starts over the current window (`passes`). Chunks that
// cannot be read are skipped and counted by reason (ReadSkipReason in chunk.h),
// as are damaged tars (IndexSkipReason; their good members are kept).
//
// single_pass: no window; every chunk of every source received is emitted
// exactly once, then the output closes once the input has closed.
// Otherwise the output never ends while the window holds chunks; it closes
// when the input closed with no chunk at all.
//
// Ranks: with DataLoaderConfig.world_size > 1 the pool keeps only the
// chunks of its rank (engine/rank_shard.h ChunkRank of the source name and
// the chunk's index in it), applied when a source is indexed: ranks read
// disjoint shards that together hold every chunk. A checkpoint names each
// source with the shard (view) its chunks were numbered in, so that an
// elastic resume (internal/chunk_pool_merge.h) can merge the states of
// another number of ranks into this rank's.
//
// Control(): ShufflingChunkPoolControlRequest resets the anchor (to the
// newest source name in the window) or sets it to a given source name; the
// response carries the anchor and the chunks taken in from sources that
// sort after it. Stop() ends every coroutine promptly.
#ifndef SLUICE_STAGES_LC0_SHUFFLING_CHUNK_POOL_H_
#define SLUICE_STAGES_LC0_SHUFFLING_CHUNK_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "proto/loader_checkpoint.pb.h"
#include "stages/lc0/chunk.h"
#include "stages/lc0/internal/chunk_pool_merge.h"
#include "stages/lc0/internal/chunk_window.h"

namespace sluice::lc0 {

class ShufflingChunkPool final : public Stage {
 public:
  // Validates the config and needs one input of ChunkSourceItem.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  // Memory (engine/memory_model.h): the window's entries (fixed),
  // reader_parallelism chunks being read and the queued chunks
  // (stages/lc0/memory_estimates.h).
  void DescribeMemory(MemoryModelBuilder& builder) const override;
  void Stop() override;
  std::optional<StageControlResponse> Control(
      const StageControlRequest& request) override;
  bool ShardsByRank() const override { return true; }
  // Checkpoints (deterministic mode). Positions are places in the output
  // of this run (Chunk::position); a checkpoint holds the window, the
  // chunks drawn from `downstream.from` on (read again first on resume,
  // after the chunks holding `downstream.restore`, which are read for
  // those records only), and the sources they need.
  void PrepareCheckpoints() override { log_draws_ = true; }
  void Acknowledge(uint64_t consumed) override;
  absl::StatusOr<std::optional<ResumeRequest>> SaveCheckpoint(
      const ResumeRequest& downstream, std::string* state) override;
  absl::Status RestoreCheckpoint(const std::string& state) override;
  // Elastic resume (internal/chunk_pool_merge.h): ends the walk; the
  // merged window is built once the files are indexed at start-up. A
  // checkpoint taken before then waits for it.
  absl::StatusOr<std::optional<ElasticRequest>> PlanElasticResume(
      const std::vector<std::string>& states, const ElasticRequest& downstream,
      ElasticResume& resume) override;
  absl::Status FinishElasticResume(const ElasticResume& resume) override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  struct IndexJob {
    std::shared_ptr<ChunkSource> source;
    bool initial = false;
  };
  // One chunk to read: a draw, or a chunk of a resume's plan.
  struct PlannedRead {
    ChunkWindow::Draw draw;
    // Its place in the output (stream chunks only).
    uint64_t position = 0;
    // Restore reads: the records wanted; and the marker that ends them.
    std::vector<uint32_t> restore_records;
    bool end_of_restore = false;
    // Replays: frames of the chunk taken in before the resume.
    uint32_t skip = 0;
    // The window's pass when it was drawn (ChunkPoolCheckpoint.Replay).
    uint64_t window_pass = 0;
  };
  struct ReadJob {
    std::vector<PlannedRead> reads;
  };
  // A stream chunk drawn in deterministic mode whose frames may not all
  // have reached the sampler yet (see Acknowledge).
  struct LoggedDraw {
    uint64_t position = 0;
    uint64_t number = 0;
    uint64_t pass = 0;
    uint32_t skip = 0;
    uint64_t window_pass = 0;
  };
  using ReadResults = std::vector<absl::StatusOr<Chunk>>;

  ShufflingChunkPool(const StageContext& context,
                     const ShufflingChunkPoolConfig& config,
                     Channel<ChunkSourceItem>* input);
  asio::awaitable<void> Intake();
  // `source`, or the view of it that keeps only this rank's chunks.
  std::shared_ptr<ChunkSource> RankShard(
      std::shared_ptr<ChunkSource> source) const;
  // This rank's view (of all chunks when world_size is 1).
  ChunkWindow::View OwnView() const {
    return {.rank = rank_, .world_size = world_size_};
  }
  // Indexes the initial sources newest first until the window is full and
  // adds them to it; false when the stage was stopped.
  asio::awaitable<bool> IndexInitial(
      std::vector<std::shared_ptr<ChunkSource>> sources);
  // Resume: indexes the initial sources the checkpoint names, restores the
  // window and plans the restore and replay reads; newer sources join as
  // new ones. False when the stage was stopped.
  asio::awaitable<bool> IndexRestored(
      std::vector<std::shared_ptr<ChunkSource>> sources);
  // Elastic resume: indexes the files the old states name, merges them
  // (merge_) and plans the restore and replay reads; newer sources join
  // as new ones. False when the stage was stopped.
  asio::awaitable<bool> IndexElastic(
      std::vector<std::shared_ptr<ChunkSource>> sources);
  // Indexes `sources` in parallel, in place; false when stopped.
  asio::awaitable<bool> IndexAll(
      const std::vector<std::shared_ptr<ChunkSource>>& sources);
  // Indexes the sources of `scanned` (whole files, by name) that `names`
  // names; the indexed ones by name. Nullopt when stopped.
  asio::awaitable<std::optional<
      std::map<std::string, std::shared_ptr<const ChunkSource>, std::less<>>>>
  IndexNamed(const std::map<std::string, std::shared_ptr<ChunkSource>,
                            std::less<>>& scanned,
             const std::vector<std::string>& names);
  // Sources that sort after `newest` join as new ones (sharded), after a
  // resume; false when stopped.
  asio::awaitable<bool> JoinNewer(
      const std::map<std::string, std::shared_ptr<ChunkSource>, std::less<>>&
          scanned,
      const std::string& newest);
  // Queues a restored run's first reads (under mu_); `usable` gives the
  // source of a saved record by its base.
  void PlanResumeReads(
      const ChunkPoolCheckpoint& saved,
      const std::map<uint64_t, std::shared_ptr<const ChunkSource>>& usable);
  // IndexElastic or IndexRestored when resuming, else IndexInitial.
  asio::awaitable<bool> StartUp(
      std::vector<std::shared_ptr<ChunkSource>> sources);
  asio::awaitable<void> Indexer();
  asio::awaitable<void> Emitter();
  asio::awaitable<void> Reader(int index);
  // The most chunks a job of reader `index` may hold.
  size_t JobLimit(int index) const;
  // Appends up to `limit` drawn chunks to `draws` if output may start (none
  // when there is none now). Sets `finished` when no chunk will ever come
  // again.
  void DrawSome(size_t limit, std::vector<PlannedRead>& reads, bool& finished);
  void Wake();

  const ShufflingChunkPoolConfig config_;
  const uint32_t rank_;
  const uint32_t world_size_;
  const size_t batch_;  // chunks per read job
  const int readers_;   // reader coroutines
  Channel<ChunkSourceItem>* const input_;
  Channel<Chunk>* const output_;
  io::AsyncFileReader* reader_ = nullptr;  // set in Start()

  // Private channels: work for the indexers, initial results, a wake-up
  // token for the emitter, one job and one result channel per reader.
  Channel<IndexJob> to_index_;
  Channel<std::shared_ptr<ChunkSource>> initial_indexed_;
  Channel<bool> wakeup_;
  std::vector<std::unique_ptr<Channel<ReadJob>>> read_jobs_;
  std::vector<std::unique_ptr<Channel<ReadResults>>> read_results_;

  std::mutex mu_;  // guards the members below
  ChunkWindow window_;
  bool initial_done_ = false;
  bool input_done_ = false;
  int indexing_in_flight_ = 0;  // new sources not yet in the window
  uint64_t reported_passes_ = 0;
  uint64_t reported_dropped_ = 0;
  // Checkpoints: the next output position, the draws not yet acknowledged
  // (deterministic mode), a resume's checkpoint until start-up and its
  // first reads.
  uint64_t next_position_ = 0;
  bool log_draws_ = false;  // set before Start()
  std::deque<LoggedDraw> draw_log_;
  std::optional<ChunkPoolCheckpoint> resume_from_;  // set before Start()
  std::optional<ChunkPoolMerge> merge_;  // an elastic resume's, likewise
  bool resuming_ = false;                // until the window is restored
  std::condition_variable resumed_;      // resuming_ became false
  std::deque<PlannedRead> planned_;

  LoadMeter indexing_meter_;
  std::atomic<uint64_t> read_errors_{0};
  std::atomic<uint64_t> chunks_emitted_{0};
  std::atomic<uint64_t> bytes_emitted_{0};
  std::atomic<uint64_t> sources_indexed_{0};
  std::atomic<uint64_t> sources_skipped_at_startup_{0};
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_SHUFFLING_CHUNK_POOL_H_
