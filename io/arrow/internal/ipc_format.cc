// Framing, footer and flatbuffer verification of the Arrow IPC formats.
#include "io/arrow/internal/ipc_format.h"

#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"

namespace sluice::io::arrow::internal {
namespace {

constexpr uint32_t kContinuation = 0xFFFFFFFF;

int32_t ReadInt32(std::span<const std::byte> bytes) {
  int32_t value;
  std::memcpy(&value, bytes.data(), sizeof(value));
  return value;
}

// Points `aligned_copy` at an 8-byte-aligned copy of `bytes` when they are
// not aligned, and returns the bytes to verify.
const uint8_t* AlignedBytes(std::span<const std::byte> bytes,
                            std::vector<uint64_t>& aligned_copy) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) == 0) {
    return reinterpret_cast<const uint8_t*>(bytes.data());
  }
  aligned_copy.resize((bytes.size() + 7) / 8);
  std::memcpy(aligned_copy.data(), bytes.data(), bytes.size());
  return reinterpret_cast<const uint8_t*>(aligned_copy.data());
}

}  // namespace

bool HasFileMagic(std::span<const std::byte> bytes) {
  return bytes.size() >= kFileMagic.size() &&
         std::memcmp(bytes.data(), kFileMagic.data(), kFileMagic.size()) == 0;
}

absl::StatusOr<MessagePrefix> ParseMessagePrefix(
    std::span<const std::byte> bytes, const std::string& file,
    const IpcLimits& limits) {
  if (bytes.size() < 4) {
    return absl::DataLossError(
        absl::StrCat(file, ": truncated message prefix (", bytes.size(),
                     " bytes where 4 or 8 are needed)"));
  }
  MessagePrefix prefix;
  int32_t length = ReadInt32(bytes);
  prefix.prefix_bytes = 4;
  if (static_cast<uint32_t>(length) == kContinuation) {
    if (bytes.size() < 8) {
      return absl::DataLossError(absl::StrCat(
          file, ": truncated message prefix after the continuation marker"));
    }
    length = ReadInt32(bytes.subspan(4));
    prefix.prefix_bytes = 8;
  }
  if (length == 0) {
    prefix.end_of_stream = true;
    return prefix;
  }
  if (length < 0) {
    return absl::DataLossError(
        absl::StrCat(file, ": negative message metadata length ", length));
  }
  if (length > limits.max_metadata_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        file, ": message metadata of ", length, " bytes exceeds the limit of ",
        limits.max_metadata_bytes, " bytes (IpcLimits::max_metadata_bytes)"));
  }
  prefix.metadata_bytes = length;
  return prefix;
}

absl::StatusOr<VerifiedMessage> VerifiedMessage::Verify(
    std::span<const std::byte> metadata, const std::string& file) {
  VerifiedMessage verified;
  const uint8_t* bytes = AlignedBytes(metadata, verified.aligned_copy_);
  flatbuffers::Verifier verifier(bytes, metadata.size());
  if (!verifier.VerifyBuffer<fb::Message>(nullptr)) {
    return absl::DataLossError(absl::StrCat(
        file, ": message metadata is not a valid Arrow Message flatbuffer"));
  }
  verified.message_ = flatbuffers::GetRoot<fb::Message>(bytes);
  return verified;
}

absl::StatusOr<Schema> SchemaFromMessage(const fb::Message& message,
                                         const std::string& file,
                                         const IpcLimits& limits) {
  if (message.header_type() != fb::MessageHeader_Schema) {
    return absl::DataLossError(absl::StrCat(
        file, ": the first message is ",
        fb::EnumNameMessageHeader(message.header_type()), ", not the Schema"));
  }
  return ConvertSchema(message.header_as_Schema(), file, limits);
}

absl::StatusOr<int64_t> MessageBodyLength(const fb::Message& message,
                                          const std::string& file,
                                          const IpcLimits& limits) {
  const int64_t length = message.bodyLength();
  if (length < 0) {
    return absl::DataLossError(
        absl::StrCat(file, ": negative message body length ", length));
  }
  if (length > limits.max_body_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        file, ": record batch body of ", length, " bytes exceeds the limit of ",
        limits.max_body_bytes, " bytes (IpcLimits::max_body_bytes)"));
  }
  return length;
}

absl::StatusOr<FooterLocation> LocateFooter(std::span<const std::byte> tail,
                                            int64_t file_size,
                                            const std::string& file,
                                            const IpcLimits& limits) {
  if (file_size < kFileHeaderBytes + kFileTailBytes ||
      tail.size() < static_cast<size_t>(kFileTailBytes)) {
    return absl::DataLossError(absl::StrCat(
        file, ": too short for an Arrow IPC file (", file_size, " bytes)"));
  }
  if (!HasFileMagic(tail.subspan(4))) {
    return absl::DataLossError(absl::StrCat(
        file, ": no ARROW1 magic at the end (truncated or not an IPC file)"));
  }
  const int32_t length = ReadInt32(tail);
  if (length <= 0) {
    return absl::DataLossError(
        absl::StrCat(file, ": footer length ", length, " is not positive"));
  }
  if (length > limits.max_metadata_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        file, ": footer of ", length, " bytes exceeds the limit of ",
        limits.max_metadata_bytes, " bytes (IpcLimits::max_metadata_bytes)"));
  }
  if (length > file_size - kFileHeaderBytes - kFileTailBytes) {
    return absl::DataLossError(absl::StrCat(
        file, ": footer length ", length, " runs past the start of the file"));
  }
  return FooterLocation{file_size - kFileTailBytes - length, length};
}

absl::StatusOr<FileFooter> ParseFooter(std::span<const std::byte> footer,
                                       const FooterLocation& location,
                                       const std::string& file,
                                       const IpcLimits& limits) {
  std::vector<uint64_t> aligned_copy;
  const uint8_t* bytes = AlignedBytes(footer, aligned_copy);
  flatbuffers::Verifier verifier(bytes, footer.size());
  if (!verifier.VerifyBuffer<fb::Footer>(nullptr)) {
    return absl::DataLossError(
        absl::StrCat(file, ": the footer is not a valid Arrow Footer"));
  }
  const fb::Footer* parsed = flatbuffers::GetRoot<fb::Footer>(bytes);
  if (parsed->schema() == nullptr) {
    return absl::DataLossError(
        absl::StrCat(file, ": the footer has no schema"));
  }
  FileFooter result;
  absl::StatusOr<Schema> schema = ConvertSchema(parsed->schema(), file, limits);
  if (!schema.ok()) return schema.status();
  result.schema = *std::move(schema);
  if (parsed->recordBatches() == nullptr) return result;
  const auto& blocks = *parsed->recordBatches();
  for (size_t i = 0; i < blocks.size(); ++i) {
    const fb::Block block = LoadStruct(blocks, i);
    const FileBlock entry{block.offset(), block.metaDataLength(),
                          block.bodyLength()};
    const std::string where =
        absl::StrCat(file, ": record batch ", result.record_batches.size());
    if (entry.offset < kFileHeaderBytes || entry.metadata_bytes <= 0 ||
        entry.body_bytes < 0) {
      return absl::DataLossError(absl::StrCat(
          where, ": invalid block (offset ", entry.offset, ", metadata ",
          entry.metadata_bytes, " bytes, body ", entry.body_bytes, " bytes)"));
    }
    if (entry.metadata_bytes > limits.max_metadata_bytes + kMaxPrefixBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          where, ": metadata of ", entry.metadata_bytes,
          " bytes exceeds the limit of ", limits.max_metadata_bytes,
          " bytes (IpcLimits::max_metadata_bytes)"));
    }
    if (entry.body_bytes > limits.max_body_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          where, ": body of ", entry.body_bytes, " bytes exceeds the limit of ",
          limits.max_body_bytes, " bytes (IpcLimits::max_body_bytes)"));
    }
    // offset >= 8 and both lengths are bounded, so the sums do not overflow.
    if (entry.offset > location.offset ||
        entry.metadata_bytes + entry.body_bytes >
            location.offset - entry.offset) {
      return absl::DataLossError(
          absl::StrCat(where, ": block at offset ", entry.offset, " (",
                       entry.metadata_bytes + entry.body_bytes,
                       " bytes) runs past the footer at ", location.offset));
    }
    result.record_batches.push_back(entry);
  }
  return result;
}

absl::StatusOr<RecordBatch> DecodeFileBlock(
    std::span<const std::byte> block_bytes, const FileBlock& block,
    const Schema& schema, std::vector<std::byte> storage,
    const std::string& file, const IpcLimits& limits) {
  if (block_bytes.size() !=
      static_cast<size_t>(block.metadata_bytes + block.body_bytes)) {
    return absl::DataLossError(
        absl::StrCat(file, ": short read of a record batch block"));
  }
  absl::StatusOr<MessagePrefix> prefix = ParseMessagePrefix(
      block_bytes.first(std::min<size_t>(block_bytes.size(), kMaxPrefixBytes)),
      file, limits);
  if (!prefix.ok()) return prefix.status();
  if (prefix->end_of_stream ||
      prefix->metadata_bytes > block.metadata_bytes - prefix->prefix_bytes) {
    return absl::DataLossError(
        absl::StrCat(file, ": the message at offset ", block.offset,
                     " does not fit the footer's block (metadata ",
                     block.metadata_bytes, " bytes)"));
  }
  absl::StatusOr<VerifiedMessage> message = VerifiedMessage::Verify(
      block_bytes.subspan(prefix->prefix_bytes, prefix->metadata_bytes), file);
  if (!message.ok()) return message.status();
  absl::StatusOr<int64_t> body_length =
      MessageBodyLength(message->get(), file, limits);
  if (!body_length.ok()) return body_length.status();
  if (*body_length > block.body_bytes) {
    return absl::DataLossError(absl::StrCat(
        file, ": the message at offset ", block.offset, " announces a body of ",
        *body_length, " bytes, its block holds ", block.body_bytes));
  }
  return DecodeRecordBatch(
      message->get(), schema,
      block_bytes.subspan(block.metadata_bytes, *body_length),
      std::move(storage), file);
}

}  // namespace sluice::io::arrow::internal
