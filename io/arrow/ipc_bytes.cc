#include "io/arrow/ipc_bytes.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/arrow/internal/ipc_format.h"

namespace sluice::io::arrow {
namespace {

absl::StatusOr<IpcContents> ReadFile(std::span<const std::byte> bytes,
                                     const std::string& name,
                                     const IpcLimits& limits) {
  const int64_t size = static_cast<int64_t>(bytes.size());
  absl::StatusOr<internal::FooterLocation> location = internal::LocateFooter(
      bytes.last(std::min<size_t>(bytes.size(), internal::kFileTailBytes)),
      size, name, limits);
  if (!location.ok()) return location.status();
  absl::StatusOr<internal::FileFooter> footer =
      internal::ParseFooter(bytes.subspan(location->offset, location->length),
                            *location, name, limits);
  if (!footer.ok()) return footer.status();
  IpcContents contents;
  contents.schema = std::move(footer->schema);
  for (const internal::FileBlock& block : footer->record_batches) {
    absl::StatusOr<RecordBatch> batch = internal::DecodeFileBlock(
        bytes.subspan(block.offset, block.metadata_bytes + block.body_bytes),
        block, contents.schema, /*storage=*/{}, name, limits);
    if (!batch.ok()) return batch.status();
    contents.batches.push_back(*std::move(batch));
  }
  return contents;
}

absl::StatusOr<IpcContents> ReadStream(std::span<const std::byte> bytes,
                                       const std::string& name,
                                       const IpcLimits& limits) {
  IpcContents contents;
  bool have_schema = false;
  size_t position = 0;
  // A stream may end without the end-of-stream marker.
  while (position < bytes.size() || !have_schema) {
    const std::span<const std::byte> rest = bytes.subspan(position);
    absl::StatusOr<internal::MessagePrefix> prefix =
        internal::ParseMessagePrefix(
            rest.first(
                std::min<size_t>(rest.size(), internal::kMaxPrefixBytes)),
            name, limits);
    if (!prefix.ok()) return prefix.status();
    if (prefix->end_of_stream) {
      if (!have_schema) {
        return absl::DataLossError(
            absl::StrCat(name, ": the stream ends before its schema"));
      }
      break;
    }
    if (prefix->metadata_bytes >
        static_cast<int64_t>(rest.size()) - prefix->prefix_bytes) {
      return absl::DataLossError(absl::StrCat(
          name, ": truncated message metadata at offset ", position));
    }
    absl::StatusOr<internal::VerifiedMessage> message =
        internal::VerifiedMessage::Verify(
            rest.subspan(prefix->prefix_bytes, prefix->metadata_bytes), name);
    if (!message.ok()) return message.status();
    const size_t body_start = prefix->prefix_bytes + prefix->metadata_bytes;
    absl::StatusOr<int64_t> body_length =
        internal::MessageBodyLength(message->get(), name, limits);
    if (!body_length.ok()) return body_length.status();
    if (*body_length > static_cast<int64_t>(rest.size() - body_start)) {
      return absl::DataLossError(absl::StrCat(
          name, ": truncated message body at offset ", position + body_start));
    }
    if (!have_schema) {
      absl::StatusOr<Schema> schema =
          internal::SchemaFromMessage(message->get(), name, limits);
      if (!schema.ok()) return schema.status();
      contents.schema = *std::move(schema);
      have_schema = true;
    } else {
      absl::StatusOr<RecordBatch> batch = internal::DecodeRecordBatch(
          message->get(), contents.schema,
          rest.subspan(body_start, *body_length), /*storage=*/{}, name);
      if (!batch.ok()) return batch.status();
      contents.batches.push_back(*std::move(batch));
    }
    position += body_start + *body_length;
  }
  return contents;
}

}  // namespace

absl::StatusOr<IpcContents> ReadIpcBytes(std::span<const std::byte> bytes,
                                         std::string_view name,
                                         const IpcLimits& limits) {
  const std::string file(name);
  if (internal::HasFileMagic(bytes)) return ReadFile(bytes, file, limits);
  return ReadStream(bytes, file, limits);
}

}  // namespace sluice::io::arrow
