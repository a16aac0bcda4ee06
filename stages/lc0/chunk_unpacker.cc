#include "stages/lc0/chunk_unpacker.h"

#include <memory>
#include <numeric>
#include <string_view>
#include <utility>

#include "engine/log.h"
#include "engine/map_worker.h"
#include "engine/stable_hash.h"
#include "engine/status_macros.h"
#include "io/gzip.h"
#include "stages/lc0/format/policy_entries.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/record_validator.h"
#include "stages/lc0/format/tensor_expansion.h"
#include "stages/lc0/memory_estimates.h"

namespace sluice::lc0 {
namespace {

uint64_t StreamSeed(uint64_t seed, std::string_view stream) {
  return HashCombine(seed, Fnv1a64(stream));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> ChunkUnpacker::Create(
    const StageContext& context) {
  const ChunkUnpackerConfig& config = context.config().chunk_unpacker();
  if (config.parallelism() == 0) {
    return context.FieldError("parallelism", "must be at least 1");
  }
  if (config.max_decompressed_bytes() == 0) {
    return context.FieldError("max_decompressed_bytes", "must be at least 1");
  }
  if (absl::StatusOr<TensorExpander> format =
          TensorExpander::Create(config.input_format());
      !format.ok()) {
    return context.FieldError("input_format",
                              std::string(format.status().message()));
  }
  if (!(config.position_sampling_rate() > 0.0 &&
        config.position_sampling_rate() <= 1.0)) {
    return context.FieldError("position_sampling_rate", "must be in (0, 1]");
  }
  const ChunkUnpackerConfig::DiffFocus& focus = config.diff_focus();
  absl::StatusOr<DiffFocus> diff_focus =
      DiffFocus::Create({.min = focus.min(),
                         .slope = focus.slope(),
                         .q_weight = focus.q_weight(),
                         .pol_scale = focus.pol_scale()});
  if (!diff_focus.ok()) {
    return context.FieldError("diff_focus",
                              std::string(diff_focus.status().message()));
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Chunk> * input, context.SingleInput<Chunk>());
  return std::unique_ptr<Stage>(
      new ChunkUnpacker(context, config, *diff_focus, input));
}

ChunkUnpacker::ChunkUnpacker(const StageContext& context,
                             const ChunkUnpackerConfig& config,
                             DiffFocus diff_focus, Channel<Chunk>* input)
    : StatelessStage(context),
      config_(config),
      diff_focus_(diff_focus),
      count_seed_(StreamSeed(context.seed(), "position_count")),
      rate_seed_(StreamSeed(context.seed(), "position_sampling_rate")),
      diff_focus_seed_(StreamSeed(context.seed(), "diff_focus")),
      input_(input),
      output_(AddOutput<Frame>("output", 256)),
      ordered_(context.ordered()
                   ? AddOrderedOutput(output_, 2 * context.MaxParallelism(
                                                       config.parallelism()))
                   : nullptr),
      gate_(AddParallelismGate(config.parallelism(),
                               context.MaxParallelism(config.parallelism()))) {}

void ChunkUnpacker::DescribeMemory(MemoryModelBuilder& builder) const {
  builder.AddOutput(output_, "output", kFrameBytesEstimate);
  // Each worker holds a chunk compressed and decompressed, and its frames;
  // in order (deterministic) two frames per worker wait to go out.
  builder.Add(
      {.part = "workers",
       .what = "chunks being unpacked",
       .knob = MemoryKnob::kParallelism,
       .field = "parallelism",
       .count = config_.parallelism(),
       .min_count = 1,
       .bytes_each = kCompressedChunkBytesEstimate +
                     kDecompressedChunkBytesEstimate +
                     (ordered_ != nullptr ? 2 : 0) * kFrameBytesEstimate});
}

void ChunkUnpacker::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, static_cast<int>(gate_->cap()),
               [this](int index) { return Work(index); });
}

asio::awaitable<void> ChunkUnpacker::Work(int index) {
  co_await RunMapWorker(
      input_, output_, ordered_, load_meter(),
      [&](const Chunk& chunk, std::vector<Frame>& frames) {
        // The decompressed chunk and the record scratch belong to the thread,
        // not to this coroutine, which each wait may move to another
        // thread: a buffer that stays on one core is written where its
        // lines already are (on cores that share no cache, a coroutine's
        // buffer written by the other core last had to fetch every line
        // from there first). Unpack does not wait, so no other coroutine
        // uses them meanwhile. Older records are up-converted in the
        // scratch (V6 records are read in place).
        thread_local std::string raw;
        thread_local const std::unique_ptr<V6TrainingRecord> scratch =
            std::make_unique_for_overwrite<V6TrainingRecord>();
        Unpack(chunk, &raw, scratch.get(), &frames);
        frames_emitted_.fetch_add(frames.size(), std::memory_order_relaxed);
      },
      /*yield_after_each_item=*/true, gate_, index);
}

void ChunkUnpacker::Unpack(const Chunk& chunk, std::string* raw,
                           V6TrainingRecord* scratch,
                           std::vector<Frame>* frames) {
  if (chunk.end_of_restore) {
    frames->push_back(Frame{.chunk_position = Frame::kEndOfRestore});
    return;
  }
  chunks_received_.fetch_add(1, std::memory_order_relaxed);
  if (!chunk.decompressed) {
    if (absl::Status status =
            io::GunzipInto(chunk.data, config_.max_decompressed_bytes(), raw);
        !status.ok()) {
      CountSkip(GunzipSkipReason(status));
      static RateLimiter limiter(absl::Seconds(5));
      if (limiter.Allow()) {
        LogWarning("stage ", name(), ": skipping chunk ", chunk.index_in_source,
                   " of ", chunk.source_name, ": ", status.ToString());
      }
      return;
    }
  }
  const std::string_view records = chunk.decompressed
                                       ? std::string_view(chunk.data)
                                       : std::string_view(*raw);
  decompressed_bytes_.fetch_add(records.size(), std::memory_order_relaxed);
  const ChunkCheck check = CheckChunk(records);
  if (check.reject) {
    CountSkip(RejectReasonName(*check.reject));
    return;
  }
  chunks_unpacked_.fetch_add(1, std::memory_order_relaxed);
  records_.fetch_add(check.record_count, std::memory_order_relaxed);

  const uint64_t game_id = chunk.id();
  const uint64_t key = HashCombine(game_id, chunk.pass);
  const auto record_count = static_cast<uint32_t>(check.record_count);
  std::vector<uint32_t> candidates;
  const bool restoring = !chunk.restore_records.empty();
  if (restoring) {
    // The records a resumed sampler held: they were kept before.
    for (const uint32_t i : chunk.restore_records) {
      if (i < record_count) candidates.push_back(i);
    }
  } else if (config_.position_count() > 0) {
    candidates = ChoosePositions(count_seed_, key, record_count,
                                 config_.position_count());
  } else {
    candidates.resize(record_count);
    std::iota(candidates.begin(), candidates.end(), 0u);
  }
  uint64_t sampled_out = restoring ? 0 : record_count - candidates.size();
  uint32_t yielded = 0;  // frames of this chunk so far: the next ordinal
  for (const uint32_t i : candidates) {
    if (!restoring && !KeepWithProbability(config_.position_sampling_rate(),
                                           rate_seed_, key, i)) {
      ++sampled_out;
      continue;
    }
    const V6TrainingRecord& record =
        ViewAsV6(records.substr(i * check.record_size, check.record_size),
                 check.version, scratch);
    const PolicyEntries entries = PolicyEntries::Find(record);
    if (std::optional<RejectReason> reason = CheckRecord(
            record, entries, check.version, config_.input_format())) {
      CountSkip(RejectReasonName(*reason));
      continue;
    }
    if (!restoring && !diff_focus_.Keep(record, diff_focus_seed_, key, i)) {
      ++sampled_out;
      continue;
    }
    const uint32_t ordinal = yielded++;
    if (ordinal < chunk.skip_frames) continue;  // taken in before a resume
    frames->push_back(Frame{
        .record = PackedRecord::Pack(
            record, entries,
            check.version == RecordVersion::kV7
                ? reinterpret_cast<const V7Tail*>(
                      records.data() + i * check.record_size + kV7TailOffset)
                : nullptr),
        .game_id = game_id,
        .chunk_number = chunk.number,
        .record_index = i,
        .ordinal = ordinal,
        .chunk_position = restoring ? Frame::kRestoredFrame : chunk.position});
  }
  sampled_out_.fetch_add(sampled_out, std::memory_order_relaxed);
}

void ChunkUnpacker::AddMetrics(StageMetricProto& metrics) {
  ChunkUnpackerMetricsProto* unpacker = metrics.mutable_chunk_unpacker();
  auto take = [](std::atomic<uint64_t>& counter) {
    return counter.exchange(0, std::memory_order_relaxed);
  };
  unpacker->set_chunks_received(take(chunks_received_));
  unpacker->set_chunks_unpacked(take(chunks_unpacked_));
  unpacker->set_decompressed_bytes(take(decompressed_bytes_));
  unpacker->set_records(take(records_));
  unpacker->set_positions_sampled_out(take(sampled_out_));
  unpacker->set_frames_emitted(take(frames_emitted_));
}

}  // namespace sluice::lc0
