#include "stages/batch_queue/batch_file_writer.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/status_macros.h"
#include "io/batch_file_meta.h"
#include "io/batch_queue_layout.h"
#include "stages/batch_queue/internal/batch_file.h"
#include "stages/batch_queue/internal/queue_config_check.h"
#include "stages/batch_queue/internal/stage_failure.h"

namespace sluice::batch_queue {
namespace {

using internal::ThrowIfError;

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> BatchFileWriter::Create(
    const StageContext& context) {
  const BatchFileWriterConfig& config = context.config().batch_file_writer();
  SLUICE_RETURN_IF_ERROR(
      CheckRootAndSplit(context, config.root(), config.split()));
  if (config.dataset_name().empty()) {
    return context.FieldError("dataset_name", "is required");
  }
  if (config.batch_size() == 0) {
    return context.FieldError("batch_size", "must be at least 1");
  }
  if (config.batches_per_file() == 0) {
    return context.FieldError("batches_per_file", "must be at least 1");
  }
  if (config.max_backlog_files() == 0) {
    return context.FieldError("max_backlog_files", "must be at least 1");
  }
  if (config.poll_interval_ms() == 0) {
    return context.FieldError("poll_interval_ms", "must be at least 1");
  }
  // meta.json's training types (io/batch_file_meta.h).
  constexpr std::string_view kTrainingTypes[] = {
      "LM", "MLM", "CLASSIFICATION", "TOKEN_CLASSIFICATION", "SEQUENCE_SCORING",
      "LC0"};
  if (std::find(std::begin(kTrainingTypes), std::end(kTrainingTypes),
                config.training_type()) == std::end(kTrainingTypes)) {
    return context.FieldError(
        "training_type",
        "must be LM, MLM, CLASSIFICATION, TOKEN_CLASSIFICATION, "
        "SEQUENCE_SCORING or LC0");
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<TypedBatch> * input,
                          context.SingleInput<TypedBatch>());
  return std::unique_ptr<Stage>(new BatchFileWriter(context, config, input));
}

BatchFileWriter::BatchFileWriter(const StageContext& context,
                                 const BatchFileWriterConfig& config,
                                 Channel<TypedBatch>* input)
    : Stage(context),
      config_(config),
      dir_(QueueDir(config.root(), config.split())),
      input_(input) {}

void BatchFileWriter::Start(const StageRuntime& runtime) {
  runtime_ = runtime;
  watch_.Start(runtime, name());
  SpawnWorkers(runtime, 1, [this](int) { return Write(); });
}

void BatchFileWriter::Stop() {
  Stage::Stop();
  watch_.Stop();
}

void BatchFileWriter::PrepareRoot(const std::vector<FieldSpec>& schema) {
  ThrowIfError(MakeDirs(dir_));
  DatasetMeta wanted{.dataset_name = config_.dataset_name(),
                     .training_type = config_.training_type(),
                     .batch_size = config_.batch_size(),
                     .batch_schema = schema};
  absl::StatusOr<DatasetMeta> existing = ReadDatasetMeta(config_.root());
  if (absl::IsNotFound(existing.status())) {
    ThrowIfError(WriteDatasetMeta(config_.root(), wanted));
  } else {
    ThrowIfError(existing.status());
    const auto differs = [&](const char* key) {
      ThrowIfError(absl::FailedPreconditionError(
          absl::StrCat(config_.root(), "/meta.json: key '", key,
                       "' differs from the writer's config")));
    };
    if (existing->dataset_name != wanted.dataset_name) differs("dataset_name");
    if (existing->training_type != wanted.training_type) {
      differs("training_type");
    }
    if (existing->batch_size != wanted.batch_size) differs("batch_size");
    ThrowIfError(CheckSameSchema(wanted.batch_schema, existing->batch_schema,
                                 config_.root() + "/meta.json"));
  }
  ThrowIfError(RemoveTemporaries(dir_));
  absl::StatusOr<int64_t> next = NextQueueSequence(dir_);
  ThrowIfError(next.status());
  next_sequence_ = *next;
}

asio::awaitable<void> BatchFileWriter::Write() {
  // Ends the watch however this coroutine ends, so the pipeline can finish.
  struct EndWatch {
    ~EndWatch() { watch->Stop(); }
    QueueWatch* watch;
  } end_watch{&watch_};
  std::vector<TypedBatch> group;
  bool prepared = false;
  while (std::optional<TypedBatch> batch =
             co_await input_->Receive(load_meter())) {
    if (batch->size() == 0) continue;
    if (!prepared) {
      PrepareRoot(BatchSchemaOf(*batch));
      prepared = true;
    }
    if (!group.empty() && batch->size() != group.front().size()) {
      if (!co_await Flush(group)) co_return;
    }
    group.push_back(*std::move(batch));
    if (group.size() >= config_.batches_per_file()) {
      if (!co_await Flush(group)) co_return;
    }
  }
  if (!group.empty() && !abort_signal().aborted()) co_await Flush(group);
}

asio::awaitable<bool> BatchFileWriter::Flush(std::vector<TypedBatch>& group) {
  const auto wait_start = std::chrono::steady_clock::now();
  while (true) {
    absl::StatusOr<std::vector<QueueFile>> files = ListQueueFiles(dir_);
    ThrowIfError(files.status());
    backlog_files_.store(files->size(), std::memory_order_relaxed);
    if (files->size() < config_.max_backlog_files()) break;
    if (watch_.Watch(dir_)) continue;  // newly watched: count again
    ScopedWait wait(load_meter());
    co_await watch_.WaitForChange(
        std::chrono::milliseconds(config_.poll_interval_ms()));
    if (abort_signal().aborted()) co_return false;
  }
  wait_nanos_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - wait_start)
                            .count(),
                        std::memory_order_relaxed);
  uint64_t bytes = 0;
  absl::StatusOr<std::string> name =
      co_await runtime_.executor->blocking_io().Run([&] {
        return WriteBatchFile(dir_, config_.split(), next_sequence_,
                              NowMillis(), group, &bytes);
      });
  ThrowIfError(name.status());
  ++next_sequence_;
  files_written_.fetch_add(1, std::memory_order_relaxed);
  batches_written_.fetch_add(group.size(), std::memory_order_relaxed);
  bytes_written_.fetch_add(bytes, std::memory_order_relaxed);
  group.clear();
  co_return true;
}

void BatchFileWriter::AddMetrics(StageMetricProto& metrics) {
  BatchFileWriterMetricsProto* out = metrics.mutable_batch_file_writer();
  out->set_files_written(files_written_.exchange(0, std::memory_order_relaxed));
  out->set_batches_written(
      batches_written_.exchange(0, std::memory_order_relaxed));
  out->set_bytes_written(bytes_written_.exchange(0, std::memory_order_relaxed));
  out->set_backlog_files(backlog_files_.load(std::memory_order_relaxed));
  out->set_backpressure_wait_seconds(
      static_cast<double>(wait_nanos_.exchange(0, std::memory_order_relaxed)) *
      1e-9);
}

}  // namespace sluice::batch_queue
