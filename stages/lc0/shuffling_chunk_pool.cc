// ShufflingChunkPool as a stage: its config, coroutines and channels, the
// output (draws from the window read in batches, emitted in draw order),
// control messages and metrics. Indexing sources at start-up and after
// lives in shuffling_chunk_pool_indexing.cc, checkpoints and resuming in
// shuffling_chunk_pool_checkpoint.cc.
#include "stages/lc0/shuffling_chunk_pool.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "engine/log.h"
#include "engine/stable_hash.h"
#include "engine/status_macros.h"
#include "stages/lc0/memory_estimates.h"

namespace sluice::lc0 {
namespace {

// Read jobs hold half the reads in flight (so that two or more jobs
// overlap), at most this many chunks.
constexpr size_t kMaxBatch = 16;

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

void ShufflingChunkPool::DescribeMemory(MemoryModelBuilder& builder) const {
  builder.AddOutput(output_, "output", kCompressedChunkBytesEstimate);
  builder.Add({.part = "window",
               .what = "chunk entries in the window",
               .count = config_.single_pass() ? 0 : config_.chunk_pool_size(),
               .bytes_each = kWindowEntryBytesEstimate});
  builder.Add({.part = "reads",
               .what = "chunks being read",
               .knob = MemoryKnob::kReadahead,
               .field = "reader_parallelism",
               .count = config_.reader_parallelism(),
               .min_count = 1,
               .bytes_each = kCompressedChunkBytesEstimate});
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
                           .skip = read.skip,
                           .window_pass = read.window_pass});
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
    read.window_pass = read.draw.pass;
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
