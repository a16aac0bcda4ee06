#include "stages/lc0/chunk_rescorer.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "engine/map_worker.h"
#include "engine/status_macros.h"
#include "io/gzip.h"
#include "stages/lc0/chess/syzygy_tablebase.h"
#include "stages/lc0/memory_estimates.h"
#include "stages/lc0/rescorer/input_format_conversion.h"

namespace sluice::lc0 {
namespace {

// An error naming `field` (its path in ChunkRescorerConfig).
absl::Status OptionError(std::string_view field, std::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(field), ": ", std::string(problem)));
}

}  // namespace

absl::StatusOr<rescorer::RescoreOptions> RescoreOptionsOf(
    const ChunkRescorerConfig& config) {
  rescorer::RescoreOptions options;
  auto in = [](float value, float low, float high) {
    return value >= low && value <= high;
  };
  if (!in(config.temperature(), 0.001f, 100.0f)) {
    return OptionError("temperature", "must be in [0.001, 100]");
  }
  if (!in(config.dist_offset(), -0.999f, 0.0f)) {
    return OptionError("dist_offset", "must be in [-0.999, 0]");
  }
  if (!in(config.dtz_policy_boost(), 0.0f, 1.0f)) {
    return OptionError("dtz_policy_boost", "must be in [0, 1]");
  }
  if (config.new_input_format() != -1 &&
      !rescorer::IsConvertibleFormat(config.new_input_format())) {
    return OptionError("new_input_format", "must be -1, 1 or 3");
  }
  if (config.output_version() != 6 && config.output_version() != 7) {
    return OptionError("output_version", "must be 6 or 7");
  }
  if (!in(config.st_q_theta(), 0.0f, 1.0f)) {
    return OptionError("st_q_theta", "must be in [0, 1]");
  }
  options.temperature = config.temperature();
  options.dist_offset = config.dist_offset();
  options.dtz_policy_boost = config.dtz_policy_boost();
  options.new_input_format = config.new_input_format();
  options.output_version = static_cast<int>(config.output_version());
  options.st_q_theta = config.st_q_theta();
  if (config.has_deblunder()) {
    if (!in(config.deblunder().threshold(), 0.0f, 2.0f)) {
      return OptionError("deblunder.threshold", "must be in [0, 2]");
    }
    if (!in(config.deblunder().width(), 0.0f, 2.0f)) {
      return OptionError("deblunder.width", "must be in [0, 2]");
    }
    options.deblunder = true;
    options.deblunder_threshold = config.deblunder().threshold();
    options.deblunder_width = config.deblunder().width();
  }
  return options;
}

absl::StatusOr<std::unique_ptr<Stage>> ChunkRescorer::Create(
    const StageContext& context) {
  const ChunkRescorerConfig& config = context.config().chunk_rescorer();
  if (config.parallelism() == 0) {
    return context.FieldError("parallelism", "must be at least 1");
  }
  if (config.max_decompressed_bytes() == 0) {
    return context.FieldError("max_decompressed_bytes", "must be at least 1");
  }
  absl::StatusOr<rescorer::RescoreOptions> options = RescoreOptionsOf(config);
  if (!options.ok()) {
    const std::string message(options.status().message());
    const size_t colon = message.find(": ");
    return context.FieldError(message.substr(0, colon),
                              message.substr(colon + 2));
  }
  if (config.syzygy_paths().empty()) {
    return context.FieldError("syzygy_paths", "at least one directory");
  }
  const std::vector<std::string> paths(config.syzygy_paths().begin(),
                                       config.syzygy_paths().end());
  absl::StatusOr<std::shared_ptr<const chess::SyzygyTablebase>> tables =
      chess::SyzygyTablebase::Load(
          paths, {.verify_checksums = config.verify_table_checksums()});
  if (!tables.ok()) {
    return context.FieldError("syzygy_paths",
                              std::string(tables.status().message()));
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Chunk> * input, context.SingleInput<Chunk>());
  return std::unique_ptr<Stage>(new ChunkRescorer(
      context, config, rescorer::GameRescorer(*std::move(tables), *options),
      input));
}

ChunkRescorer::ChunkRescorer(const StageContext& context,
                             const ChunkRescorerConfig& config,
                             rescorer::GameRescorer rescorer,
                             Channel<Chunk>* input)
    : StatelessStage(context),
      config_(config),
      rescorer_(std::move(rescorer)),
      input_(input),
      output_(AddOutput<Chunk>("output", 16)),
      ordered_(context.ordered()
                   ? AddOrderedOutput(output_, 2 * config.parallelism())
                   : nullptr) {}

void ChunkRescorer::DescribeMemory(MemoryModelBuilder& builder) const {
  // Its output holds the decompressed records.
  builder.AddOutput(output_, "output", kDecompressedChunkBytesEstimate);
  // Each worker holds a chunk compressed, decompressed and rescored; in
  // order (deterministic) two chunks per worker wait to go out.
  builder.Add({.part = "workers",
               .what = "chunks being rescored",
               .knob = MemoryKnob::kParallelism,
               .field = "parallelism",
               .count = config_.parallelism(),
               .min_count = 1,
               .bytes_each = kCompressedChunkBytesEstimate +
                             (ordered_ != nullptr ? 4 : 2) *
                                 kDecompressedChunkBytesEstimate});
}

void ChunkRescorer::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, static_cast<int>(config_.parallelism()),
               [this](int) { return Work(); });
}

asio::awaitable<void> ChunkRescorer::Work() {
  co_await RunMapWorker(input_, output_, ordered_, load_meter(),
                        [&](const Chunk& chunk, std::vector<Chunk>& out) {
                          Rescore(chunk, out);
                        });
}

void ChunkRescorer::Rescore(const Chunk& chunk, std::vector<Chunk>& out) {
  if (chunk.end_of_restore) {
    out.push_back(chunk);
    return;
  }
  // The game is decompressed into the bytes that go on, and its V6 records
  // are rescored where they lie.
  ChunkBytes records;
  if (chunk.decompressed) {
    records = chunk.data;
  } else if (absl::Status status = io::GunzipInto(
                 chunk.data, config_.max_decompressed_bytes(), &records);
             !status.ok()) {
    CountSkip(GunzipSkipReason(status));
    return;
  }
  rescorer::RescoreCounts counts;
  const std::optional<rescorer::Rejection> rejection =
      rescorer_.RescoreInPlace(&records, &counts);
  if (rejection) {
    CountSkip(rejection->reason);
    static RateLimiter limiter(absl::Seconds(5));
    if (limiter.Allow()) {
      LogWarning("stage ", name(), ": not rescoring chunk ",
                 chunk.index_in_source, " of ", chunk.source_name, ": ",
                 rejection->reason, " (", rejection->detail, ")");
    }
    return;
  }
  Chunk result;
  result.source_name = chunk.source_name;
  result.index_in_source = chunk.index_in_source;
  result.pass = chunk.pass;
  result.number = chunk.number;
  result.position = chunk.position;
  result.restore_records = chunk.restore_records;
  result.data = std::move(records);
  result.decompressed = true;
  out.push_back(std::move(result));
  games_.fetch_add(counts.games, std::memory_order_relaxed);
  positions_.fetch_add(counts.positions, std::memory_order_relaxed);
  positions_probed_.fetch_add(counts.positions_probed,
                              std::memory_order_relaxed);
  results_changed_.fetch_add(counts.results_changed, std::memory_order_relaxed);
  dtz_decisions_.fetch_add(counts.dtz_decisions, std::memory_order_relaxed);
  blunders_.fetch_add(counts.blunders, std::memory_order_relaxed);
  boosted_entries_.fetch_add(counts.boosted_entries, std::memory_order_relaxed);
  records_dropped_.fetch_add(counts.records_dropped, std::memory_order_relaxed);
}

void ChunkRescorer::AddMetrics(StageMetricProto& metrics) {
  ChunkRescorerMetricsProto* rescorer = metrics.mutable_chunk_rescorer();
  auto take = [](std::atomic<uint64_t>& counter) {
    return counter.exchange(0, std::memory_order_relaxed);
  };
  rescorer->set_games(take(games_));
  rescorer->set_positions(take(positions_));
  rescorer->set_positions_probed(take(positions_probed_));
  rescorer->set_results_changed(take(results_changed_));
  rescorer->set_dtz_decisions(take(dtz_decisions_));
  rescorer->set_blunders(take(blunders_));
  rescorer->set_boosted_entries(take(boosted_entries_));
  rescorer->set_records_dropped(take(records_dropped_));
}

}  // namespace sluice::lc0
