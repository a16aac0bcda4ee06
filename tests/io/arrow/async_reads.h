// Test helper: reads every record batch of an Arrow IPC file or stream
// through ArrowFileReader / ArrowStreamReader on a fresh io_context, with
// the io_uring backend or the pread fallback, recycling one buffer.
#ifndef SLUICE_TESTS_IO_ARROW_ASYNC_READS_H_
#define SLUICE_TESTS_IO_ARROW_ASYNC_READS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "asio/io_context.hpp"
#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/arrow_stream_reader.h"
#include "io/arrow/ipc_bytes.h"
#include "io/async_file_reader.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice::io::arrow::testing {

enum class IpcFormat { kFile, kStream };

struct AsyncReadResult {
  // The first error met, or OK.
  absl::Status status;
  IpcContents contents;
  // The backend the reader actually used.
  bool used_io_uring = false;
};

inline AsyncReadResult ReadAllAsync(const std::string& path, IpcFormat format,
                                    bool use_io_uring, IpcLimits limits = {}) {
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = use_io_uring});
  AsyncReadResult result;
  result.used_io_uring = reader.uses_io_uring();
  sluice::testing::CoroutineRunner runner(io);
  runner.Spawn([&]() -> asio::awaitable<void> {
    if (format == IpcFormat::kFile) {
      absl::StatusOr<std::unique_ptr<ArrowFileReader>> file =
          co_await ArrowFileReader::Open(reader, path, limits);
      if (!file.ok()) {
        result.status = file.status();
        co_return;
      }
      result.contents.schema = (*file)->schema();
      for (int i = 0; i < (*file)->num_record_batches(); ++i) {
        absl::StatusOr<RecordBatch> batch =
            co_await (*file)->ReadRecordBatch(i);
        if (!batch.ok()) {
          result.status = batch.status();
          co_return;
        }
        result.contents.batches.push_back(*std::move(batch));
      }
    } else {
      absl::StatusOr<std::unique_ptr<ArrowStreamReader>> stream =
          co_await ArrowStreamReader::Open(reader, path, limits);
      if (!stream.ok()) {
        result.status = stream.status();
        co_return;
      }
      result.contents.schema = (*stream)->schema();
      while (true) {
        absl::StatusOr<std::optional<RecordBatch>> batch =
            co_await (*stream)->Next();
        if (!batch.ok()) {
          result.status = batch.status();
          co_return;
        }
        if (!batch->has_value()) break;
        result.contents.batches.push_back(**std::move(batch));
      }
    }
  });
  runner.RunToCompletion();
  return result;
}

}  // namespace sluice::io::arrow::testing

#endif  // SLUICE_TESTS_IO_ARROW_ASYNC_READS_H_
