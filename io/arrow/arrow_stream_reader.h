// ArrowStreamReader: the record batches of an Arrow IPC *stream* file
// (encapsulated messages, with or without the 0xFFFFFFFF continuation
// marker, ending at the end-of-stream marker or the end of the file), read
// in order through io::AsyncFileReader.
//
//   absl::StatusOr<std::unique_ptr<ArrowStreamReader>> reader =
//       co_await ArrowStreamReader::Open(file_reader, "train.arrows");
//   std::vector<std::byte> buffer;
//   while (true) {
//     absl::StatusOr<std::optional<RecordBatch>> batch =
//         co_await (*reader)->Next(std::move(buffer));
//     if (!batch.ok() || !batch->has_value()) break;  // error or end
//     ... use **batch ...
//     buffer = std::move(**batch).TakeBuffer();
//   }
//
// Promises:
// - Open reads the schema message only.
// - Next reads the next message's prefix and metadata, then its body into
//   the buffer it is given (reusing its capacity): memory is one metadata
//   buffer plus the bodies of the batches the caller holds; a body is
//   bounded by IpcLimits::max_body_bytes before anything is allocated.
// - Next returns nullopt at the end of the stream, then again on every
//   call; after an error it returns that error again.
// - SkipNext learns a batch's rows from its metadata alone.
// - One Next at a time (the stream is sequential). Awaitables resume on the
//   executor of the awaiting coroutine and never throw; the reader and the
//   AsyncFileReader must outlive them.
#ifndef SLUICE_IO_ARROW_ARROW_STREAM_READER_H_
#define SLUICE_IO_ARROW_ARROW_STREAM_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asio/awaitable.hpp"
#include "io/arrow/internal/ipc_format.h"
#include "io/arrow/internal/read_only_file.h"
#include "io/arrow/ipc_limits.h"
#include "io/arrow/record_batch.h"
#include "io/arrow/schema.h"
#include "io/async_file_reader.h"

namespace sluice::io::arrow {

class ArrowStreamReader {
 public:
  // Opens `path` and reads the schema message; `direct_io` as
  // ArrowFileReader::Open.
  static asio::awaitable<absl::StatusOr<std::unique_ptr<ArrowStreamReader>>>
  Open(AsyncFileReader& reader, std::string path, IpcLimits limits = {},
       bool direct_io = false);

  const std::string& path() const { return file_.path(); }
  const std::string& direct_io_refusal() const {
    return file_.direct_io_refusal();
  }
  const Schema& schema() const { return schema_; }

  // The next record batch read into `buffer` (which it owns), or nullopt at
  // the end of the stream.
  asio::awaitable<absl::StatusOr<std::optional<RecordBatch>>> Next(
      std::vector<std::byte> buffer = {});

  // The row count of the next record batch, whose body is skipped, not
  // read (one small read for the message's prefix and metadata), or
  // nullopt at the end of the stream: a survey of the rows. The metadata is
  // checked as Next checks it before the body (a dictionary batch or a
  // compressed body is refused); the body only as far as lying within the
  // file. Errors and the end stick as for Next; the two may be mixed.
  asio::awaitable<absl::StatusOr<std::optional<int64_t>>> SkipNext();

 private:
  ArrowStreamReader(AsyncFileReader& reader, internal::ReadOnlyFile file,
                    IpcLimits limits);

  // A message whose body starts at position_ and lies within the file.
  struct MessageBeforeBody {
    internal::VerifiedMessage message;
    int64_t body_bytes = 0;
  };
  // The next message up to its body, nullopt at the end of the stream;
  // keeps an error (and the end) for every later call.
  asio::awaitable<absl::StatusOr<std::optional<MessageBeforeBody>>>
  NextMessage();
  // Keeps `error` for every later call and returns it.
  absl::Status Fail(absl::Status error);

  AsyncFileReader& reader_;
  internal::ReadOnlyFile file_;
  IpcLimits limits_;
  Schema schema_;
  // Offset of the next message.
  int64_t position_ = 0;
  // The last message's metadata (reused).
  std::vector<std::byte> metadata_;
  bool finished_ = false;
  absl::Status error_;
};

}  // namespace sluice::io::arrow

#endif  // SLUICE_IO_ARROW_ARROW_STREAM_READER_H_
