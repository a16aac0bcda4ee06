#include "stages/lc0/shuffling_chunk_pool.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "engine/rank_shard.h"
#include "engine/stable_hash.h"
#include "engine/status_macros.h"

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

// Read jobs hold half the reads in flight (so that two or more jobs
// overlap), at most this many chunks.
constexpr size_t kMaxBatch = 16;

bool NewerFirst(const std::shared_ptr<ChunkSource>& a,
                const std::shared_ptr<ChunkSource>& b) {
  if (a->name() != b->name()) return a->name() > b->name();
  return a->path() > b->path();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> ShufflingChunkPool::Create(
    const StageContext& context) {
  const ShufflingChunkPoolConfig& config =
      context.config().shuffling_chunk_pool();
  if (!config.single_pass() && config.chunk_pool_size() == 0) {
    return context.FieldError("chunk_pool_size",
                              "must be at least 1 (unless single_pass)");
  }
  if (config.reader_parallelism() == 0 || config.reader_parallelism() > 4096) {
    return context.FieldError("reader_parallelism", "must be in [1, 4096]");
  }
  if (config.indexing_parallelism() == 0 ||
      config.indexing_parallelism() > 4096) {
    return context.FieldError("indexing_parallelism", "must be in [1, 4096]");
  }
  if (config.max_chunk_bytes() == 0) {
    return context.FieldError("max_chunk_bytes", "must be at least 1");
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<ChunkSourceItem> * input,
                          context.SingleInput<ChunkSourceItem>());
  return std::unique_ptr<Stage>(new ShufflingChunkPool(context, config, input));
}

ShufflingChunkPool::ShufflingChunkPool(const StageContext& context,
                                       const ShufflingChunkPoolConfig& config,
                                       Channel<ChunkSourceItem>* input)
    : Stage(context),
      config_(config),
      rank_(context.rank()),
      world_size_(context.world_size()),
      batch_(std::clamp<size_t>(config.reader_parallelism() / 2, 1, kMaxBatch)),
      readers_(static_cast<int>((config.reader_parallelism() + batch_ - 1) /
                                batch_)),
      input_(input),
      output_(AddOutput<Chunk>("output", 64)),
      to_index_("to_index", config.indexing_parallelism()),
      initial_indexed_("initial_indexed", config.indexing_parallelism()),
      wakeup_("wakeup", 1, OverflowPolicy::kDropNew),
      window_(config.chunk_pool_size(), config.single_pass(),
              HashCombine(context.seed(), Fnv1a64(context.name()))) {
  for (int i = 0; i < readers_; ++i) {
    read_jobs_.push_back(std::make_unique<Channel<ReadJob>>("read_jobs", 1));
    read_results_.push_back(
        std::make_unique<Channel<ReadResults>>("read_results", 1));
  }
}

void ShufflingChunkPool::Start(const StageRuntime& runtime) {
  reader_ = &runtime.executor->file_reader();
  // Indexing runs outside SpawnWorkers: its load is `indexing_load`, and
  // the output closes when the emitter and the readers are done.
  runtime.tasks->Spawn(name(), Intake());
  for (uint32_t i = 0; i < config_.indexing_parallelism(); ++i) {
    runtime.tasks->Spawn(name(), Indexer());
  }
  SpawnWorkers(runtime, readers_ + 1, [this](int index) {
    return index == 0 ? Emitter() : Reader(index - 1);
  });
}

void ShufflingChunkPool::Stop() {
  Stage::Stop();
  {
    std::lock_guard lock(mu_);  // a checkpoint waiting for the resume
  }
  resumed_.notify_all();
  to_index_.Cancel();
  initial_indexed_.Cancel();
  wakeup_.Cancel();
  for (auto& channel : read_jobs_) channel->Cancel();
  for (auto& channel : read_results_) channel->Cancel();
}

void ShufflingChunkPool::Wake() {
  bool token = true;
  wakeup_.TrySend(token);
}

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

size_t ShufflingChunkPool::JobLimit(int index) const {
  return std::min(batch_, config_.reader_parallelism() - index * batch_);
}

void ShufflingChunkPool::DrawSome(size_t limit, std::vector<PlannedRead>& reads,
                                  bool& finished) {
  std::lock_guard lock(mu_);
  finished = false;
  if (!initial_done_) return;
  const auto number_stream_read = [this](PlannedRead& read) {
    read.position = next_position_++;
    if (log_draws_) {
      draw_log_.push_back({.position = read.position,
                           .number = read.draw.number,
                           .pass = read.draw.pass,
                           .skip = read.skip});
    }
  };
  while (reads.size() < limit && !planned_.empty()) {
    PlannedRead read = std::move(planned_.front());
    planned_.pop_front();
    if (!read.end_of_restore && read.restore_records.empty()) {
      number_stream_read(read);
    }
    reads.push_back(std::move(read));
  }
  while (reads.size() < limit) {
    std::optional<ChunkWindow::Draw> draw = window_.Next();
    if (!draw) break;
    PlannedRead read{.draw = *std::move(draw)};
    number_stream_read(read);
    reads.push_back(std::move(read));
  }
  if (reads.empty()) finished = input_done_ && indexing_in_flight_ == 0;
}

asio::awaitable<void> ShufflingChunkPool::Emitter() {
  static RateLimiter limiter(absl::Seconds(5));
  // Jobs go round-robin to the readers; results are taken back in job
  // order, so the output order is the draw order.
  uint64_t dispatched = 0, collected = 0;
  bool finished = false;
  while (true) {
    while (!finished &&
           dispatched - collected < static_cast<uint64_t>(readers_)) {
      const int reader = static_cast<int>(dispatched % readers_);
      ReadJob job;
      DrawSome(JobLimit(reader), job.reads, finished);
      if (job.reads.empty()) break;
      if (!co_await read_jobs_[reader]->Send(std::move(job), load_meter())) {
        co_return;
      }
      ++dispatched;
    }
    if (collected == dispatched) {
      if (finished) break;
      if (!co_await wakeup_.Receive(load_meter())) co_return;
      continue;
    }
    std::optional<ReadResults> results =
        co_await read_results_[collected % readers_]->Receive(load_meter());
    if (!results) co_return;
    ++collected;
    for (absl::StatusOr<Chunk>& result : *results) {
      if (!result.ok()) {
        if (IsReadFailure(result.status())) read_errors_.fetch_add(1);
        CountSkip(ReadSkipReason(result.status()));
        if (limiter.Allow()) {
          LogWarning("stage ", name(), ": skipping chunk: ", result.status());
        }
        continue;
      }
      const uint64_t bytes = result->data.size();
      // TrySend spares a suspension point per chunk while there is room.
      if (!output_->TrySend(*result) &&
          !co_await output_->Send(*std::move(result), load_meter())) {
        co_return;
      }
      chunks_emitted_.fetch_add(1, std::memory_order_relaxed);
      bytes_emitted_.fetch_add(bytes, std::memory_order_relaxed);
    }
  }
  for (auto& channel : read_jobs_) channel->Close();
}

asio::awaitable<void> ShufflingChunkPool::Reader(int index) {
  Channel<ReadJob>& jobs = *read_jobs_[index];
  Channel<ReadResults>& results = *read_results_[index];
  std::vector<ChunkSource::Ref> refs;
  std::vector<const PlannedRead*> reading;
  while (std::optional<ReadJob> job = co_await jobs.Receive(load_meter())) {
    refs.clear();
    reading.clear();
    for (const PlannedRead& read : job->reads) {
      if (read.draw.source == nullptr) continue;
      refs.push_back({read.draw.source.get(), read.draw.local_index});
      reading.push_back(&read);
    }
    ReadResults read_chunks;
    if (!refs.empty()) {
      ScopedWait wait(load_meter());
      read_chunks = co_await ChunkSource::ReadChunks(*reader_, refs,
                                                     config_.max_chunk_bytes());
    }
    // In the job's order; chunks of sources a resume found gone or
    // changed were counted when it found them and are left out.
    ReadResults chunks;
    size_t next = 0;
    for (PlannedRead& read : job->reads) {
      if (read.end_of_restore) {
        chunks.push_back(Chunk{.end_of_restore = true});
        continue;
      }
      if (read.draw.source == nullptr) continue;
      absl::StatusOr<Chunk>& chunk = read_chunks[next++];
      if (chunk.ok()) {
        chunk->pass = read.draw.pass;
        chunk->number = read.draw.number;
        chunk->position = read.position;
        chunk->restore_records = std::move(read.restore_records);
        chunk->skip_frames = read.skip;
      }
      chunks.push_back(std::move(chunk));
    }
    if (!co_await results.Send(std::move(chunks), load_meter())) co_return;
  }
}

std::optional<StageControlResponse> ShufflingChunkPool::Control(
    const StageControlRequest& request) {
  if (!request.has_chunk_pool_request()) return std::nullopt;
  const ShufflingChunkPoolControlRequest& pool = request.chunk_pool_request();
  StageControlResponse response;
  response.set_stage_name(name());
  std::lock_guard lock(mu_);
  if (pool.reset_chunk_anchor()) {
    window_.ResetAnchor();
  } else if (pool.has_set_chunk_anchor()) {
    window_.SetAnchor(pool.set_chunk_anchor());
  }
  ShufflingChunkPoolControlResponse& out =
      *response.mutable_chunk_pool_response();
  out.set_chunk_anchor(window_.anchor());
  out.set_chunks_since_anchor(static_cast<int32_t>(std::min<uint64_t>(
      window_.chunks_since_anchor(), std::numeric_limits<int32_t>::max())));
  return response;
}

void ShufflingChunkPool::AddMetrics(StageMetricProto& metrics) {
  ShufflingChunkPoolMetricsProto& out = *metrics.mutable_shuffling_chunk_pool();
  {
    std::lock_guard lock(mu_);
    out.set_sources(window_.sources());
    out.set_chunks_in_pool(window_.chunks());
    out.set_passes(window_.passes() - reported_passes_);
    reported_passes_ = window_.passes();
    out.set_chunks_dropped(window_.chunks_dropped() - reported_dropped_);
    reported_dropped_ = window_.chunks_dropped();
    out.set_chunks_since_anchor(window_.chunks_since_anchor());
    out.set_anchor(window_.anchor());
  }
  out.set_capacity(config_.single_pass() ? 0 : config_.chunk_pool_size());
  out.set_read_errors(read_errors_.exchange(0));
  out.set_chunks_emitted(chunks_emitted_.exchange(0));
  out.set_bytes_emitted(bytes_emitted_.exchange(0));
  out.set_sources_indexed(sources_indexed_.exchange(0));
  out.set_sources_skipped_at_startup(sources_skipped_at_startup_.exchange(0));
  *out.mutable_indexing_load() = indexing_meter_.Flush();
}

}  // namespace sluice::lc0
