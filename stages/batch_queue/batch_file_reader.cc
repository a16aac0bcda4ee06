#include "stages/batch_queue/batch_file_reader.h"

#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
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

// Unused batch buffers kept for reuse.
constexpr size_t kPooledBuffers = 8;

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> BatchFileReader::Create(
    const StageContext& context) {
  const BatchFileReaderConfig& config = context.config().batch_file_reader();
  SLUICE_RETURN_IF_ERROR(context.RequireNoInputs());
  SLUICE_RETURN_IF_ERROR(
      CheckRootAndSplit(context, config.root(), config.split()));
  if (config.poll_interval_ms() == 0) {
    return context.FieldError("poll_interval_ms", "must be at least 1");
  }
  if (config.delete_attempts() == 0) {
    return context.FieldError("delete_attempts", "must be at least 1");
  }
  return std::unique_ptr<Stage>(new BatchFileReader(context, config));
}

BatchFileReader::BatchFileReader(const StageContext& context,
                                 const BatchFileReaderConfig& config)
    : Stage(context), config_(config), output_(AddOutput<TypedBatch>()) {}

void BatchFileReader::Start(const StageRuntime& runtime) {
  runtime_ = runtime;
  watch_.Start(runtime, name());
  SpawnWorkers(runtime, 1, [this](int) { return Read(); });
}

void BatchFileReader::Stop() {
  Stage::Stop();
  watch_.Stop();
}

asio::awaitable<bool> BatchFileReader::IdleWait() {
  const auto now = std::chrono::steady_clock::now();
  if (config_.idle_timeout_ms() > 0 &&
      now - idle_since_ >=
          std::chrono::milliseconds(config_.idle_timeout_ms())) {
    co_return false;
  }
  // Newly watched directories are scanned again before any wait.
  const bool root_added = watch_.Watch(config_.root());
  if (watch_.Watch(QueueDir(config_.root(), config_.split())) || root_added) {
    co_return true;
  }
  {
    ScopedWait wait(load_meter());
    co_await watch_.WaitForChange(
        std::chrono::milliseconds(config_.poll_interval_ms()));
  }
  wait_nanos_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - now)
                            .count(),
                        std::memory_order_relaxed);
  co_return !abort_signal().aborted();
}

asio::awaitable<bool> BatchFileReader::AwaitMeta() {
  while (true) {
    absl::StatusOr<DatasetMeta> meta = ReadDatasetMeta(config_.root());
    if (meta.ok()) {
      absl::StatusOr<std::vector<BatchTensorSpec>> specs =
          TensorSpecsOf(meta->batch_schema);
      if (!specs.ok()) {
        ThrowIfError(absl::InvalidArgumentError(
            absl::StrCat(config_.root(), "/meta.json: batch_schema: ",
                         std::string(specs.status().message()))));
      }
      schema_ = meta->batch_schema;
      specs_ = *std::move(specs);
      co_return true;
    }
    if (!absl::IsNotFound(meta.status())) {
      ThrowIfError(
          absl::Status(meta.status().code(),
                       absl::StrCat(config_.root(), "/",
                                    std::string(meta.status().message()))));
    }
    if (!co_await IdleWait()) co_return false;
  }
}

asio::awaitable<void> BatchFileReader::Read() {
  // Ends the watch however this coroutine ends, so the pipeline can finish.
  struct EndWatch {
    ~EndWatch() { watch->Stop(); }
    QueueWatch* watch;
  } end_watch{&watch_};
  idle_since_ = std::chrono::steady_clock::now();
  if (!co_await AwaitMeta()) co_return;
  std::error_code error;
  if (!std::filesystem::exists(config_.root() + "/queue", error)) {
    absl::StatusOr<std::vector<QueueFile>> legacy =
        ListLegacyFiles(config_.root(), config_.split());
    ThrowIfError(legacy.status());
    for (const QueueFile& file : *legacy) {
      if (!co_await ReadFile(config_.root(), file.name, false)) co_return;
    }
    co_return;
  }
  const std::string dir = QueueDir(config_.root(), config_.split());
  while (true) {
    absl::StatusOr<std::vector<QueueFile>> files = ListQueueFiles(dir);
    ThrowIfError(files.status());
    std::erase_if(*files, [this](const QueueFile& file) {
      std::lock_guard lock(deleting_mu_);
      return deleting_.contains(file.name);
    });
    backlog_files_.store(files->size(), std::memory_order_relaxed);
    if (files->empty()) {
      if (!co_await IdleWait()) co_return;
      continue;
    }
    if (!co_await ReadFile(dir, files->front().name, true)) co_return;
    idle_since_ = std::chrono::steady_clock::now();
  }
}

asio::awaitable<bool> BatchFileReader::ReadFile(std::string dir,
                                                std::string name,
                                                bool consume) {
  const std::string path = absl::StrCat(dir, "/", name);
  {
    absl::StatusOr<BatchFile> file =
        co_await runtime_.executor->blocking_io().Run(
            [&] { return BatchFile::Open(path, schema_); });
    if (absl::IsNotFound(file.status())) co_return true;
    if (absl::IsDataLoss(file.status())) {
      Quarantine(dir, name);
      co_return true;
    }
    ThrowIfError(file.status());
    const auto batch_size = static_cast<size_t>(file->info().batch_size);
    const size_t batch_bytes = TypedBatch::AllocationBytes(specs_, batch_size);
    if (pool_ == nullptr || pool_->bytes() != batch_bytes) {
      pool_ = BatchBufferPool::Create(batch_bytes, kPooledBuffers);
    }
    for (int64_t b = 0; b < file->info().num_batches; ++b) {
      absl::StatusOr<TypedBatch> batch = co_await ReadBatch(*file, b);
      if (absl::IsDataLoss(batch.status())) {
        Quarantine(dir, name);
        co_return true;
      }
      ThrowIfError(batch.status());
      TypedBatch item = *std::move(batch);
      if (!co_await output_->Send(std::move(item), load_meter())) {
        co_return false;
      }
      batches_emitted_.fetch_add(1, std::memory_order_relaxed);
    }
    bytes_read_.fetch_add(file->file_size(), std::memory_order_relaxed);
  }  // Closed before the delete, so the delete frees the page cache.
  files_consumed_.fetch_add(1, std::memory_order_relaxed);
  if (consume) {
    {
      std::lock_guard lock(deleting_mu_);
      deleting_.insert(name);
    }
    // A worker of its own: the output closes only after every delete.
    SpawnWorkers(runtime_, 1, [&](int) { return Delete(path, name); });
  }
  co_return true;
}

asio::awaitable<absl::StatusOr<TypedBatch>> BatchFileReader::ReadBatch(
    const BatchFile& file, int64_t index) {
  absl::StatusOr<TypedBatch> batch = TypedBatch::Allocate(
      specs_, static_cast<size_t>(file.info().batch_size), pool_);
  if (!batch.ok()) co_return batch.status();
  absl::StatusOr<std::vector<BatchFile::Piece>> pieces =
      file.Pieces(index, *batch);
  if (!pieces.ok()) co_return pieces.status();
  for (const BatchFile::Piece& piece : *pieces) {
    absl::StatusOr<size_t> got =
        co_await runtime_.executor->file_reader().ReadFullyAt(
            file.fd(), piece.offset, piece.data);
    if (!got.ok()) {
      co_return absl::Status(
          got.status().code(),
          absl::StrCat(file.path(), ": ", std::string(got.status().message())));
    }
    if (*got != piece.data.size()) {
      co_return absl::DataLossError(absl::StrCat(file.path(), ": short read"));
    }
  }
  co_return batch;
}

asio::awaitable<void> BatchFileReader::Delete(std::string path,
                                              std::string name) {
  // Forgets the name once the delete is over, however it ends.
  struct Forget {
    ~Forget() {
      std::lock_guard lock(self->deleting_mu_);
      self->deleting_.erase(name);
    }
    BatchFileReader* self;
    const std::string& name;
  } forget{this, name};
  auto backoff = std::chrono::milliseconds(config_.delete_backoff_ms());
  for (uint32_t attempt = 1;; ++attempt) {
    int error;
    {
      ScopedWait wait(load_meter());
      error = co_await runtime_.executor->blocking_io().Run([&path] {
        return unlink(path.c_str()) == 0 || errno == ENOENT ? 0 : errno;
      });
    }
    if (error == 0) co_return;
    if (attempt >= config_.delete_attempts()) {
      throw std::runtime_error(
          absl::StrCat("cannot delete consumed batch file ", path, " after ",
                       attempt, " attempts: ", std::strerror(error)));
    }
    delete_retries_.fetch_add(1, std::memory_order_relaxed);
    if (!co_await abort_signal().SleepFor(backoff)) co_return;
    backoff *= 2;
  }
}

void BatchFileReader::Quarantine(const std::string& dir,
                                 const std::string& name) {
  CountSkip("corrupt_file");
  const std::string quarantine = QuarantineDir(config_.root());
  ThrowIfError(MakeDirs(quarantine));
  const std::string from = absl::StrCat(dir, "/", name);
  const std::string to =
      absl::StrCat(quarantine, "/", config_.split(), "-", name);
  if (rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT) {
    throw std::runtime_error(
        absl::StrCat("cannot quarantine ", from, ": ", std::strerror(errno)));
  }
}

void BatchFileReader::AddMetrics(StageMetricProto& metrics) {
  BatchFileReaderMetricsProto* out = metrics.mutable_batch_file_reader();
  out->set_files_consumed(
      files_consumed_.exchange(0, std::memory_order_relaxed));
  out->set_batches_emitted(
      batches_emitted_.exchange(0, std::memory_order_relaxed));
  out->set_bytes_read(bytes_read_.exchange(0, std::memory_order_relaxed));
  out->set_backlog_files(backlog_files_.load(std::memory_order_relaxed));
  out->set_wait_seconds(
      static_cast<double>(wait_nanos_.exchange(0, std::memory_order_relaxed)) *
      1e-9);
  out->set_delete_retries(
      delete_retries_.exchange(0, std::memory_order_relaxed));
}

}  // namespace sluice::batch_queue
