#include "stages/generic/arrow_source.h"

#include <algorithm>
#include <functional>
#include <set>
#include <span>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "engine/status_macros.h"
#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/arrow_stream_reader.h"
#include "stages/generic/internal/arrow_batch_reads.h"
#include "stages/generic/internal/arrow_buffer_pool.h"
#include "stages/generic/internal/arrow_column_plan.h"
#include "stages/generic/internal/arrow_row_blocks.h"
#include "stages/generic/internal/arrow_row_examples.h"
#include "stages/generic/internal/arrow_source_merge.h"
#include "stages/generic/internal/arrow_survey.h"

namespace sluice {

namespace arrow = io::arrow;
using arrow::ArrayView;
using arrow::RecordBatch;

namespace {

// Blocks the ROW_BLOCKS output holds (each may keep a record batch alive).
// Four are enough to cover a consumer's wake-up; with 16, two worker threads
// kept up to 27 blocks of 1 MiB in flight (4 on one thread), each a fresh
// buffer whose first touch costs 256 page faults.
constexpr uint32_t kOutputCapacity = 4;
// Row blocks read at once, at most (one per worker thread).
constexpr size_t kMaxBlockReadsAtOnce = 4;
constexpr uint32_t kMaxBlockRows = 1 << 20;
// EXAMPLES output: examples handed to the output channel at once.
constexpr size_t kExamplesPerSend = 64;

// The output `config` asks for: as set, else blocks when the one stage
// that takes the output is a batcher (it copies or wraps runs of rows, with
// no per-row cost), else examples.
ArrowSourceConfig::Output ChosenOutput(const StageContext& context,
                                       const ArrowSourceConfig& config) {
  if (config.has_output()) return config.output();
  const std::vector<std::string>& consumers = context.consumer_types();
  return consumers.size() == 1 && consumers.front() == "batcher"
             ? ArrowSourceConfig::ROW_BLOCKS
             : ArrowSourceConfig::EXAMPLES;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> ArrowSource::Create(
    const StageContext& context) {
  ArrowSourceConfig config = context.config().arrow_source();
  config.set_output(ChosenOutput(context, config));
  if (config.column_size() == 0) {
    return context.FieldError("column", "must list at least one column");
  }
  std::set<std::string, std::less<>> fields = {std::string(kArrowIndexField),
                                               std::string(kArrowSeedField)};
  for (const ArrowSourceConfig::Column& column : config.column()) {
    if (column.name().empty()) {
      return context.FieldError("column.name", "must not be empty");
    }
    const std::string& field =
        column.has_field() ? column.field() : column.name();
    if (field.empty()) {
      return context.FieldError("column.field", "must not be empty");
    }
    if (!fields.insert(field).second) {
      return context.FieldError(
          "column.field",
          absl::StrCat("'", field,
                       "' is used twice (or is \"index\" or \"seed\", which "
                       "the stage sets)"));
    }
  }
  if (config.readahead() == 0) {
    return context.FieldError("readahead", "must be at least 1");
  }
  if (config.block_rows() > kMaxBlockRows) {
    return context.FieldError("block_rows",
                              absl::StrCat("must be at most ", kMaxBlockRows));
  }
  if (config.block_rows() > 0 &&
      config.output() != ArrowSourceConfig::ROW_BLOCKS) {
    return context.FieldError("block_rows", "needs output: ROW_BLOCKS");
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<DiscoveredFile> * input,
                          context.SingleInput<DiscoveredFile>());
  return std::unique_ptr<Stage>(new ArrowSource(context, config, input));
}

ArrowSource::ArrowSource(const StageContext& context,
                         const ArrowSourceConfig& config,
                         Channel<DiscoveredFile>* input)
    : Stage(context),
      config_(config),
      rank_(context.rank()),
      world_size_(context.world_size()),
      seed_(context.seed()),
      input_(input),
      output_(config.output() == ArrowSourceConfig::EXAMPLES
                  ? AddOutput<Example>("output", 1024)
                  : nullptr),
      block_output_(config.output() == ArrowSourceConfig::ROW_BLOCKS
                        ? AddOutput<ExampleBlock>("output", kOutputCapacity)
                        : nullptr),
      batches_("batches", config.readahead()),
      permits_("permits", config.readahead()),
      // Free buffers kept for reuse: enough for the record batches being
      // read plus those the output channel's items and as many again
      // downstream (a batcher's batches of views, a consumer) may hold, so
      // that steady state reuses warm buffers and allocates none.
      pool_(std::make_shared<ArrowBufferPool>(config.readahead() +
                                              2 * kOutputCapacity + 4)) {
  for (uint32_t i = 0; i < config.readahead(); ++i) {
    bool permit = true;
    permits_.TrySend(permit);
  }
}

ArrowSource::~ArrowSource() = default;

bool ArrowSource::ReadsRowBlocks() const {
  return block_rows_ > 0 && world_size_ <= 1;
}

void ArrowSource::Start(const StageRuntime& runtime) {
  reader_ = &runtime.executor->file_reader();
  // Each read in flight holds a permit: more reads than `readahead` would
  // wait for a permit that only a delivered block gives back.
  block_reads_at_once_ = std::clamp<size_t>(
      std::min<size_t>(runtime.executor->threads(), config_.readahead()), 1,
      kMaxBlockReadsAtOnce);
  // block_rows: as configured, else what the consumer asks for.
  block_rows_ = config_.block_rows();
  if (block_rows_ == 0 && block_output_ != nullptr) {
    block_rows_ = std::min<uint64_t>(block_output_->preferred_group_rows(),
                                     kMaxBlockRows);
  }
  SpawnWorkers(runtime, 2, [this](int i) {
    if (i == 0) return Read();
    return block_output_ != nullptr ? EmitBlocks() : Emit();
  });
}

void ArrowSource::Stop() {
  Stage::Stop();
  batches_.Cancel();
  permits_.Cancel();
}

void ArrowSource::SkipFile(std::string_view reason,
                           const std::string& message) {
  static RateLimiter limiter(absl::Seconds(5));
  CountSkip(reason);
  if (limiter.Allow()) {
    LogWarning("stage ", name(), ": skipping file (", std::string(reason),
               "): ", message);
  }
}

void ArrowSource::NoteDirectIoRefusal(const std::string& path,
                                      const std::string& refusal) {
  if (refusal.empty()) return;
  static RateLimiter limiter(absl::Seconds(5));
  direct_io_refused_.fetch_add(1);
  if (limiter.Allow()) {
    LogWarning("stage ", name(), ": O_DIRECT refused for ", path, " (", refusal,
               "); reading it through the page cache");
  }
}

void ArrowSource::SkipRow(std::string_view reason, const DatasetFile& file,
                          const std::string& column, int64_t row) {
  static RateLimiter limiter(absl::Seconds(5));
  CountSkip(reason);
  if (limiter.Allow()) {
    LogWarning("stage ", name(), ": skipping row ", row, " of ", file.path,
               " (", std::string(reason), " in column '", column, "')");
  }
}

asio::awaitable<std::vector<std::string>> ArrowSource::Discover() {
  std::vector<std::string> paths;
  while (std::optional<DiscoveredFile> file =
             co_await input_->Receive(load_meter())) {
    if (file->phase == DiscoveryPhase::kInitialScanComplete) break;
    if (!HasArrowFileExtension(file->path)) {
      CountSkip("unknown_file_type");
      continue;
    }
    paths.push_back(std::move(file->path));
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  co_return paths;
}

asio::awaitable<void> ArrowSource::Survey(std::vector<std::string> paths) {
  const BlockColumnsFunction block_columns = [this](const arrow::Schema& schema,
                                                    const std::string& path) {
    if (!ReadsRowBlocks()) return std::vector<int>{};
    absl::StatusOr<std::vector<ArrowColumnPlan>> plan =
        PlanColumns(schema, config_, path);
    return plan.ok() ? FixedRowColumns(schema, *plan) : std::vector<int>{};
  };
  std::vector<absl::StatusOr<ArrowFileSurvey>> surveys =
      co_await SurveyArrowFiles(*reader_, paths, block_columns);
  dataset_ = DatasetOfSurveys(
      std::move(paths), std::move(surveys), config_,
      [this](std::string_view reason, const std::string& message) {
        SkipFile(reason, message);
      });
  const int64_t rows =
      dataset_.empty() ? 0 : dataset_.back()->offset + dataset_.back()->rows;
  dataset_files_ = dataset_.size();
  dataset_rows_ = static_cast<uint64_t>(rows);
  LogInfo("stage ", name(), ": ", dataset_.size(), " Arrow files, ", rows,
          " rows");
}

asio::awaitable<void> ArrowSource::Read() {
  co_await Survey(co_await Discover());
  if (abort_signal().aborted()) co_return;  // stopped during discovery
  if (checkpoint_.resuming()) {
    dataset_rows_ = static_cast<uint64_t>(
        AdoptSavedDataSet(checkpoint_.resume_from(), dataset_,
                          [this](std::string_view reason, uint64_t files,
                                 const std::string& message) {
                            CountSkip(reason, files);
                            LogWarning("stage ", name(), ": resume: ", message);
                          }));
    dataset_files_ = dataset_.size();
    if (!co_await ReadRestoredRows()) co_return;
  }
  // The stream's blocks end where the checkpointed run's did (restored
  // rows moved the phase).
  if (block_rows_ > 0) {
    const auto block = static_cast<int64_t>(block_rows_);
    block_phase_ = (checkpoint_.start_phase() % block + block) % block;
  }
  checkpoint_.MarkSurveyed();
  if (!co_await ReadRestOfPass()) co_return;
  const bool train = config_.mode() == ArrowSourceConfig::TRAIN;
  const ArrowCheckpointState::StreamPoint start = checkpoint_.start();
  for (uint64_t pass = start.pass; !dataset_.empty(); ++pass) {
    const std::vector<const DatasetFile*> order =
        FilesOfPass(dataset_, train, seed_ + pass);
    const uint64_t before = delivered_;
    const bool first_pass = pass == start.pass;
    // A resumed pass may begin at its very end: only a pass read from its
    // first row tells whether the data set still has any.
    const bool whole_pass = !first_pass || (start.slot == 0 && start.row == 0);
    for (uint64_t slot = first_pass ? start.slot : 0; slot < order.size();
         ++slot) {
      const int64_t from_row = first_pass && slot == start.slot ? start.row : 0;
      FileRead read{
          .pass = pass,
          .position = checkpoint_.LogRead(pass, slot, from_row, block_phase_),
          .from_row = from_row};
      if (!co_await ReadFile(order[slot], read)) co_return;
    }
    passes_.fetch_add(1);
    if (!train) break;
    if (whole_pass && delivered_ == before) {
      LogWarning("stage ", name(),
                 ": a whole pass read no record batch; stopping");
      break;
    }
  }
  if (dataset_.empty()) {
    LogWarning("stage ", name(), ": no readable Arrow file was found");
  }
  batches_.Close();
}

asio::awaitable<bool> ArrowSource::ReadFile(const DatasetFile* file,
                                            FileRead read) {
  if (file->gone) co_return true;
  const auto fail = [this](const absl::Status& status) {
    SkipFile(ArrowFileSkipReason(status), std::string(status.message()));
  };
  // The schema is checked again: the file may have changed since the survey.
  const auto schema_matches = [&](const arrow::Schema& schema) {
    absl::StatusOr<std::vector<ArrowColumnPlan>> plan =
        PlanColumns(schema, config_, file->path);
    if (!plan.ok() || !SameColumns(*plan, file->plan)) {
      SkipFile("file_changed", absl::StrCat(file->path, ": schema changed"));
      return false;
    }
    return true;
  };
  const ArrowBatchSink sink{
      .pool = pool_.get(),
      .permits = &permits_,
      .meter = load_meter(),
      .deliver =
          [this, file, &read](RecordBatch batch, unsigned home,
                              int64_t first_row, int record_batches) {
            return Deliver(std::move(batch), home, file, first_row, read,
                           record_batches);
          },
      .fail = fail,
      .end_row = read.to_row};
  files_.fetch_add(1);
  if (file->stream) {
    absl::StatusOr<std::unique_ptr<arrow::ArrowStreamReader>> reader =
        co_await arrow::ArrowStreamReader::Open(*reader_, file->path, {},
                                                config_.direct_io());
    if (!reader.ok()) {
      fail(reader.status());
      co_return true;
    }
    NoteDirectIoRefusal(file->path, (*reader)->direct_io_refusal());
    if (!schema_matches((*reader)->schema())) co_return true;
    co_return co_await ReadStreamBatches(**reader, sink);
  }
  absl::StatusOr<std::unique_ptr<arrow::ArrowFileReader>> reader =
      co_await arrow::ArrowFileReader::Open(*reader_, file->path, {},
                                            config_.direct_io());
  if (!reader.ok()) {
    fail(reader.status());
    co_return true;
  }
  NoteDirectIoRefusal(file->path, (*reader)->direct_io_refusal());
  if (!schema_matches((*reader)->schema())) co_return true;
  const arrow::ArrowFileReader& batches = **reader;
  if (ReadsRowBlocks() && read.only_rows == nullptr) {
    const RowBlockReads plan{.from_row = read.from_row,
                             .block_rows = static_cast<int64_t>(block_rows_),
                             .phase = block_phase_,
                             .reads_at_once = block_reads_at_once_};
    if (file->layout.has_value() && batches.version() == file->version) {
      co_return co_await ReadRowBlocks(batches, *file->layout, plan, sink);
    }
    // Changed since the survey, or its layout not found then.
    const std::vector<int> columns =
        FixedRowColumns(batches.schema(), file->plan);
    if (!columns.empty()) {
      absl::StatusOr<std::optional<arrow::ArrowFileReader::ColumnLayout>>
          layout = co_await batches.LocateColumns(columns);
      if (!layout.ok()) {
        fail(layout.status());
        co_return true;
      }
      if (layout->has_value()) {
        co_return co_await ReadRowBlocks(batches, **layout, plan, sink);
      }
    }
  }
  co_return co_await ReadRecordBatches(batches, sink);
}

asio::awaitable<bool> ArrowSource::Deliver(RecordBatch batch, unsigned home,
                                           const DatasetFile* file,
                                           int64_t first_row,
                                           const FileRead& read,
                                           int record_batches) {
  std::optional<std::vector<int64_t>> only_rows =
      RestoredRowsOfBatch(read, first_row, batch.num_rows());
  if ((only_rows && only_rows->empty()) ||
      first_row + batch.num_rows() <= read.from_row ||
      (read.to_row >= 0 && first_row >= read.to_row)) {
    // Nothing of it is wanted: its permit goes back at once.
    pool_->Give(std::move(batch).TakeBuffer(), home);
    bool permit = true;
    permits_.TrySend(permit);
    co_return true;
  }
  record_batches_.fetch_add(record_batches);
  ++delivered_;
  if (block_rows_ > 0) {
    block_phase_ =
        (block_phase_ + batch.num_rows()) % static_cast<int64_t>(block_rows_);
  }
  bytes_.fetch_add(static_cast<uint64_t>(RecordBatchValueBytes(batch)));
  // Rows past the surveyed count would take indexes of the next file.
  int64_t rows = batch.num_rows();
  if (first_row + rows > file->rows) {
    const int64_t extra = first_row + rows - std::max(first_row, file->rows);
    CountSkip("file_changed", extra);
    rows -= extra;
  }
  LoadedBatch loaded{.batch = ShareRecordBatch(std::move(batch), pool_, home),
                     .file = file,
                     .first_row = first_row,
                     .rows = rows,
                     .pass_seed = seed_ + read.pass,
                     .read = read,
                     .only_rows = std::move(only_rows)};
  co_return co_await batches_.Send(std::move(loaded), load_meter());
}

asio::awaitable<void> ArrowSource::Emit() {
  const RowExampleOptions options{
      .train = config_.mode() == ArrowSourceConfig::TRAIN,
      .max_value_bytes = config_.max_value_bytes()};
  std::vector<Example> examples;
  examples.reserve(kExamplesPerSend);
  while (std::optional<LoadedBatch> loaded =
             co_await batches_.Receive(load_meter())) {
    const RecordBatch& batch = *loaded->batch;
    const DatasetFile& file = *loaded->file;
    const int64_t first_row = loaded->first_row;
    const RowSkipFunction skip = [&](std::string_view reason,
                                     const ArrowColumnPlan& plan, int64_t row) {
      SkipRow(reason, file, plan.column, first_row + row);
    };
    std::vector<std::vector<const ArrayView*>> chains;
    for (const ArrowColumnPlan& plan : file.plan) {
      chains.push_back(ColumnChain(batch, plan));
    }
    // Rows [begin, end) of the batch, or of its only_rows.
    const std::vector<int64_t>* only =
        loaded->only_rows ? &*loaded->only_rows : nullptr;
    auto [begin, end] = RankRowsOfBatch(*loaded, rank_, world_size_);
    begin = std::max(begin, loaded->read.from_row - loaded->first_row);
    if (only != nullptr) {
      begin = 0;
      end = static_cast<int64_t>(only->size());
    }
    // The batch's examples go out kExamplesPerSend at a time, under one
    // lock each (Channel::SendAll), never mixing two batches.
    for (int64_t i = begin; i < end;) {
      examples.clear();
      const std::shared_ptr<const void> hold = HoldForRows(*loaded);
      for (; i < end && examples.size() < kExamplesPerSend; ++i) {
        const int64_t r = only != nullptr ? (*only)[i] : i;
        if (r >= loaded->rows) {  // a restored row cut by file_changed
          i = end;
          break;
        }
        std::optional<Example> example =
            MakeRowExample(*loaded, chains, r, options, skip, hold);
        if (example) examples.push_back(*std::move(example));
      }  // skipped rows are counted
      if (!co_await output_->SendAll(std::span(examples), load_meter())) {
        co_return;
      }
      rows_emitted_.fetch_add(examples.size(), std::memory_order_relaxed);
    }
    loaded.reset();  // the examples keep the batch alive, not the emitter
    bool permit = true;
    permits_.TrySend(permit);
  }
}

asio::awaitable<void> ArrowSource::EmitBlocks() {
  std::vector<ExampleBlock> blocks;
  while (std::optional<LoadedBatch> loaded =
             co_await batches_.Receive(load_meter())) {
    const DatasetFile& file = *loaded->file;
    const int64_t first_row = loaded->first_row;
    const RowBlockOptions options{
        .first_index = file.offset + first_row,
        .train = config_.mode() == ArrowSourceConfig::TRAIN,
        .pass_seed = loaded->pass_seed,
        .max_value_bytes = config_.max_value_bytes(),
        .origin = {.ref = {.unit = loaded->read.pass << 32 | file.number,
                           .index = static_cast<uint32_t>(first_row)},
                   .cursor = {.position = loaded->read.position,
                              .ordinal = static_cast<uint32_t>(first_row)},
                   .restored = loaded->only_rows.has_value()}};
    const RowSkipFunction skip = [&](std::string_view reason,
                                     const ArrowColumnPlan& plan, int64_t row) {
      SkipRow(reason, file, plan.column, first_row + row);
    };
    blocks.clear();
    for (const auto& [begin, end] : RowRunsToEmit(*loaded)) {
      AppendRowBlocks(loaded->batch, begin, end, file.plan, options, skip,
                      blocks);
    }
    loaded.reset();  // the blocks keep the batch alive, not the emitter
    for (ExampleBlock& block : blocks) {
      const int64_t rows = block.rows();
      if (!co_await block_output_->Send(std::move(block), load_meter())) {
        co_return;
      }
      rows_emitted_.fetch_add(rows, std::memory_order_relaxed);
    }
    bool permit = true;
    permits_.TrySend(permit);
  }
}

std::vector<std::pair<int64_t, int64_t>> ArrowSource::RowRunsToEmit(
    const LoadedBatch& loaded) const {
  std::vector<std::pair<int64_t, int64_t>> runs;
  if (loaded.only_rows) {
    // A resume's restored rows: each run of consecutive ones.
    for (const int64_t row : *loaded.only_rows) {
      if (row >= loaded.rows) break;  // cut by file_changed
      if (!runs.empty() && runs.back().second == row) {
        ++runs.back().second;
      } else {
        runs.emplace_back(row, row + 1);
      }
    }
    return runs;
  }
  auto [begin, end] = RankRowsOfBatch(loaded, rank_, world_size_);
  begin = std::max(begin, loaded.read.from_row - loaded.first_row);
  if (begin < end) runs.emplace_back(begin, end);
  return runs;
}

asio::awaitable<bool> ArrowSource::ReadRestoredRows() {
  for (const auto& [key, rows] : RestoredRows(checkpoint_.resume_from())) {
    const auto [pass, number] = key;
    if (number >= dataset_.size()) continue;  // counted downstream
    if (!co_await ReadFile(dataset_[number].get(),
                           {.pass = pass, .only_rows = &rows})) {
      co_return false;
    }
  }
  co_return true;
}

asio::awaitable<bool> ArrowSource::ReadRestOfPass() {
  const std::vector<ArrowSourceCheckpoint::RowRun>& runs =
      checkpoint_.rest_of_pass();
  for (size_t i = 0; i < runs.size(); ++i) {
    const ArrowSourceCheckpoint::RowRun& run = runs[i];
    FileRead read{
        .pass = run.pass(),
        .position = checkpoint_.LogRead(run.pass(), 0, run.begin(),
                                        block_phase_, static_cast<int64_t>(i)),
        .from_row = run.begin(),
        .to_row = run.end()};
    if (run.file() >= dataset_.size()) continue;  // not of the data set
    if (!co_await ReadFile(dataset_[run.file()].get(), read)) co_return false;
  }
  co_return true;
}

void ArrowSource::PrepareCheckpoints() { checkpoint_.set_logging(true); }

void ArrowSource::Acknowledge(uint64_t consumed) {
  checkpoint_.Acknowledge(consumed);
}

absl::StatusOr<std::optional<ResumeRequest>> ArrowSource::SaveCheckpoint(
    const ResumeRequest& downstream, std::string* state) {
  SLUICE_RETURN_IF_ERROR(checkpoint_.Save(downstream, dataset_, name(), state));
  return std::nullopt;
}

absl::Status ArrowSource::RestoreCheckpoint(const std::string& state) {
  return checkpoint_.Restore(state);
}

absl::StatusOr<std::optional<ElasticRequest>> ArrowSource::PlanElasticResume(
    const std::vector<std::string>& states, const ElasticRequest& downstream,
    ElasticResume& resume) {
  SLUICE_ASSIGN_OR_RETURN(
      const ArrowSourceCheckpoint merged,
      MergeArrowSourceStates(
          states, downstream,
          {.train = config_.mode() == ArrowSourceConfig::TRAIN, .seed = seed_},
          resume.rank, resume.world_size));
  merged.SerializeToString(&merged_state_);
  resume.translate = [](uint32_t, uint64_t unit) { return unit; };
  return std::nullopt;
}

absl::Status ArrowSource::FinishElasticResume(const ElasticResume& resume) {
  const absl::Status restored = checkpoint_.Restore(merged_state_);
  merged_state_.clear();
  return restored;
}

void ArrowSource::AddMetrics(StageMetricProto& metrics) {
  ArrowSourceMetricsProto& out = *metrics.mutable_arrow_source();
  out.set_files(files_.exchange(0));
  out.set_record_batches(record_batches_.exchange(0));
  out.set_rows_emitted(rows_emitted_.exchange(0));
  out.set_bytes(bytes_.exchange(0));
  out.set_passes(passes_.exchange(0));
  out.set_dataset_files(dataset_files_.load());
  out.set_dataset_rows(dataset_rows_.load());
  out.set_direct_io_refused(direct_io_refused_.exchange(0));
}

}  // namespace sluice
