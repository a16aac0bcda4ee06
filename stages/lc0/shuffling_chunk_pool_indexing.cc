// ShufflingChunkPool's indexing: taking sources from the input, keeping
// this rank's chunks, indexing the initial scan newest first until the
// window is full (or handing start-up to the resume), and indexing later
// sources as they arrive.
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "engine/log.h"
#include "engine/rank_shard.h"
#include "stages/lc0/shuffling_chunk_pool.h"

namespace sluice::lc0 {
namespace {

// Counts a coroutine as a worker of `meter` for its lifetime.
class MeterWorker {
 public:
  explicit MeterWorker(LoadMeter* meter) : meter_(meter) {
    meter_->WorkerStarted();
  }
  ~MeterWorker() { meter_->WorkerFinished(); }
  MeterWorker(const MeterWorker&) = delete;
  MeterWorker& operator=(const MeterWorker&) = delete;

 private:
  LoadMeter* meter_;
};

bool NewerFirst(const std::shared_ptr<ChunkSource>& a,
                const std::shared_ptr<ChunkSource>& b) {
  if (a->name() != b->name()) return a->name() > b->name();
  return a->path() > b->path();
}

}  // namespace

std::shared_ptr<ChunkSource> ShufflingChunkPool::RankShard(
    std::shared_ptr<ChunkSource> source) const {
  if (world_size_ <= 1 || source == nullptr) return source;
  return source->WithFilter([rank = rank_, world_size = world_size_](
                                std::string_view name, uint64_t index) {
    return ChunkRank(name, index, world_size) == rank;
  });
}

asio::awaitable<void> ShufflingChunkPool::Intake() {
  MeterWorker worker(&indexing_meter_);
  std::vector<std::shared_ptr<ChunkSource>> initial;
  bool initial_done = false;
  while (std::optional<ChunkSourceItem> item =
             co_await input_->Receive(&indexing_meter_)) {
    if (!initial_done) {
      if (item->source != nullptr &&
          item->phase == DiscoveryPhase::kInitialScan) {
        initial.push_back(std::move(item->source));
        continue;
      }
      initial_done = true;
      if (!co_await StartUp(std::move(initial))) co_return;
    }
    if (item->source == nullptr) continue;
    item->source = RankShard(std::move(item->source));
    {
      std::lock_guard lock(mu_);
      ++indexing_in_flight_;
    }
    IndexJob job{std::move(item->source), false};
    if (!co_await to_index_.Send(std::move(job), &indexing_meter_)) {
      co_return;
    }
  }
  if (!initial_done && !co_await StartUp(std::move(initial))) co_return;
  to_index_.Close();
  {
    std::lock_guard lock(mu_);
    input_done_ = true;
  }
  Wake();
}

asio::awaitable<bool> ShufflingChunkPool::StartUp(
    std::vector<std::shared_ptr<ChunkSource>> sources) {
  // A stage stopped during the initial scan has only part of it.
  if (abort_signal().aborted()) co_return false;
  if (merge_.has_value()) co_return co_await IndexElastic(std::move(sources));
  if (resume_from_.has_value()) {
    co_return co_await IndexRestored(std::move(sources));
  }
  for (auto& source : sources) source = RankShard(std::move(source));
  co_return co_await IndexInitial(std::move(sources));
}

asio::awaitable<bool> ShufflingChunkPool::IndexAll(
    const std::vector<std::shared_ptr<ChunkSource>>& sources) {
  size_t next = 0, in_flight = 0;
  while (next < sources.size() || in_flight > 0) {
    while (in_flight < config_.indexing_parallelism() &&
           next < sources.size()) {
      IndexJob job{sources[next++], true};
      if (!co_await to_index_.Send(std::move(job), &indexing_meter_)) {
        co_return false;
      }
      ++in_flight;
    }
    if (!co_await initial_indexed_.Receive(&indexing_meter_)) co_return false;
    --in_flight;
  }
  co_return true;
}

asio::awaitable<bool> ShufflingChunkPool::IndexInitial(
    std::vector<std::shared_ptr<ChunkSource>> sources) {
  std::sort(sources.begin(), sources.end(), NewerFirst);
  const uint64_t wanted = config_.single_pass()
                              ? std::numeric_limits<uint64_t>::max()
                              : config_.chunk_pool_size();
  const size_t parallelism = config_.indexing_parallelism();
  std::vector<std::shared_ptr<ChunkSource>> indexed;
  size_t next = 0, in_flight = 0;
  uint64_t chunks = 0;
  while (true) {
    while (in_flight < parallelism && next < sources.size() &&
           chunks < wanted) {
      IndexJob job{sources[next++], true};
      if (!co_await to_index_.Send(std::move(job), &indexing_meter_)) {
        co_return false;
      }
      ++in_flight;
    }
    if (in_flight == 0) break;
    std::optional<std::shared_ptr<ChunkSource>> done =
        co_await initial_indexed_.Receive(&indexing_meter_);
    if (!done) co_return false;
    --in_flight;
    chunks += (*done)->size();
    indexed.push_back(*std::move(done));
  }
  sources_skipped_at_startup_.fetch_add(sources.size() - next);
  std::sort(indexed.begin(), indexed.end(), NewerFirst);
  {
    std::lock_guard lock(mu_);
    for (auto it = indexed.rbegin(); it != indexed.rend(); ++it) {
      window_.Add(std::move(*it), OwnView());
    }
    initial_done_ = true;
  }
  LogInfo("stage ", name(), ": start-up indexed ", indexed.size(), " of ",
          sources.size(), " sources (", chunks, " chunks)");
  Wake();
  co_return true;
}

asio::awaitable<void> ShufflingChunkPool::Indexer() {
  MeterWorker worker(&indexing_meter_);
  static RateLimiter limiter(absl::Seconds(5));
  while (std::optional<IndexJob> job =
             co_await to_index_.Receive(&indexing_meter_)) {
    absl::Status damage = co_await job->source->Index(*reader_);
    sources_indexed_.fetch_add(1);
    if (const uint64_t apple_double = job->source->apple_double_members()) {
      CountSkip("apple_double", apple_double);
    }
    if (!damage.ok()) {
      CountSkip(IndexSkipReason(damage));
      if (limiter.Allow()) {
        LogWarning("stage ", name(), ": ", job->source->path(), ": ", damage,
                   " (", job->source->size(), " chunks kept)");
      }
    }
    if (job->initial) {
      if (!co_await initial_indexed_.Send(std::move(job->source),
                                          &indexing_meter_)) {
        co_return;
      }
      continue;
    }
    {
      std::lock_guard lock(mu_);
      window_.Add(std::move(job->source), OwnView());
      --indexing_in_flight_;
    }
    Wake();
  }
}

}  // namespace sluice::lc0
