#include "io/arrow/arrow_stream_reader.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/arrow/internal/ipc_format.h"

namespace sluice::io::arrow {
namespace {

// Reads the prefix and metadata of the message at `*position` into
// `metadata` and verifies it; `*position` moves to the message's body.
// nullopt at the end-of-stream marker, or at the end of the file when
// `may_end` (a stream may end without the marker).
asio::awaitable<absl::StatusOr<std::optional<internal::VerifiedMessage>>>
ReadMessage(AsyncFileReader& reader, const internal::ReadOnlyFile& file,
            const IpcLimits& limits, bool may_end, int64_t* position,
            std::vector<std::byte>* metadata) {
  const int64_t remaining = file.size() - *position;
  if (remaining == 0 && may_end) co_return std::nullopt;
  std::array<std::byte, internal::kMaxPrefixBytes> prefix_bytes;
  const std::span<std::byte> prefix_span =
      std::span(prefix_bytes)
          .first(std::min<int64_t>(remaining, internal::kMaxPrefixBytes));
  absl::Status read = co_await file.ReadExactly(reader, *position, prefix_span);
  if (!read.ok()) co_return read;
  absl::StatusOr<internal::MessagePrefix> prefix =
      internal::ParseMessagePrefix(prefix_span, file.path(), limits);
  if (!prefix.ok()) co_return prefix.status();
  if (prefix->end_of_stream) {
    if (!may_end) {
      co_return absl::DataLossError(
          absl::StrCat(file.path(), ": the stream ends before its schema"));
    }
    co_return std::nullopt;
  }
  if (prefix->metadata_bytes > remaining - prefix->prefix_bytes) {
    co_return absl::DataLossError(absl::StrCat(
        file.path(), ": truncated message metadata at offset ", *position));
  }
  metadata->resize(prefix->metadata_bytes);
  read = co_await file.ReadExactly(reader, *position + prefix->prefix_bytes,
                                   *metadata);
  if (!read.ok()) co_return read;
  absl::StatusOr<internal::VerifiedMessage> message =
      internal::VerifiedMessage::Verify(*metadata, file.path());
  if (!message.ok()) co_return message.status();
  *position += prefix->prefix_bytes + prefix->metadata_bytes;
  co_return *std::move(message);
}

}  // namespace

ArrowStreamReader::ArrowStreamReader(AsyncFileReader& reader,
                                     internal::ReadOnlyFile file,
                                     IpcLimits limits)
    : reader_(reader), file_(std::move(file)), limits_(limits) {}

asio::awaitable<absl::StatusOr<std::unique_ptr<ArrowStreamReader>>>
ArrowStreamReader::Open(AsyncFileReader& reader, std::string path,
                        IpcLimits limits, bool direct_io) {
  absl::StatusOr<internal::ReadOnlyFile> file =
      internal::ReadOnlyFile::Open(std::move(path), direct_io);
  if (!file.ok()) co_return file.status();
  std::unique_ptr<ArrowStreamReader> stream(
      new ArrowStreamReader(reader, *std::move(file), limits));
  const internal::ReadOnlyFile& opened = stream->file_;
  absl::StatusOr<std::optional<internal::VerifiedMessage>> message =
      co_await ReadMessage(reader, opened, limits, /*may_end=*/false,
                           &stream->position_, &stream->metadata_);
  if (!message.ok()) co_return message.status();
  absl::StatusOr<Schema> schema =
      internal::SchemaFromMessage((*message)->get(), opened.path(), limits);
  if (!schema.ok()) co_return schema.status();
  absl::StatusOr<int64_t> body_length =
      internal::MessageBodyLength((*message)->get(), opened.path(), limits);
  if (!body_length.ok()) co_return body_length.status();
  stream->schema_ = *std::move(schema);
  stream->position_ += *body_length;  // a schema has no body, normally
  co_return stream;
}

absl::Status ArrowStreamReader::Fail(absl::Status error) {
  error_ = std::move(error);
  return error_;
}

asio::awaitable<
    absl::StatusOr<std::optional<ArrowStreamReader::MessageBeforeBody>>>
ArrowStreamReader::NextMessage() {
  if (!error_.ok()) co_return error_;
  if (finished_) co_return std::nullopt;
  absl::StatusOr<std::optional<internal::VerifiedMessage>> message =
      co_await ReadMessage(reader_, file_, limits_, /*may_end=*/true,
                           &position_, &metadata_);
  if (!message.ok()) co_return Fail(message.status());
  if (!message->has_value()) {
    finished_ = true;
    co_return std::nullopt;
  }
  absl::StatusOr<int64_t> body_bytes =
      internal::MessageBodyLength((*message)->get(), path(), limits_);
  if (!body_bytes.ok()) co_return Fail(body_bytes.status());
  if (*body_bytes > file_.size() - position_) {
    co_return Fail(absl::DataLossError(absl::StrCat(
        path(), ": truncated message body at offset ", position_)));
  }
  co_return MessageBeforeBody{.message = **std::move(message),
                              .body_bytes = *body_bytes};
}

asio::awaitable<absl::StatusOr<std::optional<RecordBatch>>>
ArrowStreamReader::Next(std::vector<std::byte> buffer) {
  absl::StatusOr<std::optional<MessageBeforeBody>> next =
      co_await NextMessage();
  if (!next.ok()) co_return next.status();
  if (!next->has_value()) co_return std::nullopt;
  const MessageBeforeBody& message = **next;
  // The span stays valid when `buffer` moves into the batch.
  const std::span<std::byte> body = internal::PageCongruentSpan(
      buffer, position_, static_cast<size_t>(message.body_bytes));
  absl::Status read = co_await file_.ReadExactly(reader_, position_, body);
  if (!read.ok()) co_return Fail(read);
  position_ += message.body_bytes;
  absl::StatusOr<RecordBatch> batch = internal::DecodeRecordBatch(
      message.message.get(), schema_, body, std::move(buffer), path());
  if (!batch.ok()) co_return Fail(batch.status());
  co_return std::optional<RecordBatch>(*std::move(batch));
}

asio::awaitable<absl::StatusOr<std::optional<int64_t>>>
ArrowStreamReader::SkipNext() {
  absl::StatusOr<std::optional<MessageBeforeBody>> next =
      co_await NextMessage();
  if (!next.ok()) co_return next.status();
  if (!next->has_value()) co_return std::nullopt;
  absl::StatusOr<const internal::fb::RecordBatch*> header =
      internal::RecordBatchHeader((*next)->message.get(), path());
  if (!header.ok()) co_return Fail(header.status());
  position_ += (*next)->body_bytes;
  co_return std::optional<int64_t>((*header)->length());
}

}  // namespace sluice::io::arrow
