// The Arrow IPC framing and metadata decoding shared by every reader
// (ReadIpcBytes, ArrowFileReader, ArrowStreamReader): message prefixes, the
// file footer, flatbuffer verification, schema conversion and record batch
// decoding. Pure functions over bytes: no I/O here.
//
// Every error message starts with the file name given; refusals of an
// unsupported feature are Unimplemented and name the column and the
// feature, damage is DataLoss, a limit exceeded is ResourceExhausted.
#ifndef SLUICE_IO_ARROW_INTERNAL_IPC_FORMAT_H_
#define SLUICE_IO_ARROW_INTERNAL_IPC_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/arrow/internal/arrow_ipc_generated.h"
#include "io/arrow/internal/file_footer.h"
#include "io/arrow/ipc_limits.h"
#include "io/arrow/record_batch.h"
#include "io/arrow/schema.h"

namespace sluice::io::arrow::internal {

namespace fb = ::org::apache::arrow::flatbuf;

// "ARROW1": the first and last bytes of an IPC file.
inline constexpr std::string_view kFileMagic = "ARROW1";
// The magic padded to 8 bytes, where the first message starts.
inline constexpr int64_t kFileHeaderBytes = 8;
// The file's tail: int32 footer length then the magic.
inline constexpr int64_t kFileTailBytes = 4 + 6;
// Bytes to read to parse any message prefix.
inline constexpr int64_t kMaxPrefixBytes = 8;

// Element `i` of a verified vector of structs, copied out: the Verifier
// checks such vectors for 4-byte alignment only, and Buffer, FieldNode and
// Block hold 8-byte fields.
template <typename T>
T LoadStruct(const flatbuffers::Vector<const T*>& vector, size_t i) {
  T value;
  std::memcpy(&value, vector.Data() + i * sizeof(T), sizeof(T));
  return value;
}

// True when `bytes` starts with the file magic.
bool HasFileMagic(std::span<const std::byte> bytes);

// What starts an encapsulated message.
struct MessagePrefix {
  // The end-of-stream marker (a zero metadata length).
  bool end_of_stream = false;
  // 8 with the 0xFFFFFFFF continuation marker, 4 in the legacy form.
  int64_t prefix_bytes = 0;
  // Flatbuffer bytes (with padding) after the prefix.
  int64_t metadata_bytes = 0;
};

// Parses the prefix at the start of `bytes` (up to kMaxPrefixBytes of
// them; fewer only at the end of the file).
absl::StatusOr<MessagePrefix> ParseMessagePrefix(
    std::span<const std::byte> bytes, const std::string& file,
    const IpcLimits& limits);

// A Message flatbuffer that passed the flatbuffers Verifier. Keeps an
// aligned copy of the bytes when they were not 8-byte aligned; otherwise
// points into them (they must then outlive it).
class VerifiedMessage {
 public:
  static absl::StatusOr<VerifiedMessage> Verify(
      std::span<const std::byte> metadata, const std::string& file);
  const fb::Message& get() const { return *message_; }

 private:
  std::vector<uint64_t> aligned_copy_;
  const fb::Message* message_ = nullptr;
};

// Converts a verified Schema, refusing anything unsupported.
absl::StatusOr<Schema> ConvertSchema(const fb::Schema* schema,
                                     const std::string& file,
                                     const IpcLimits& limits);

// The schema in a verified message; an error if it is another message.
absl::StatusOr<Schema> SchemaFromMessage(const fb::Message& message,
                                         const std::string& file,
                                         const IpcLimits& limits);

// Body bytes the message announces, checked against limits.
absl::StatusOr<int64_t> MessageBodyLength(const fb::Message& message,
                                          const std::string& file,
                                          const IpcLimits& limits);

// The RecordBatch header of `message`, refusing what DecodeRecordBatch
// refuses before it looks at the body: another message type, a dictionary
// batch, a compressed body, a negative length.
absl::StatusOr<const fb::RecordBatch*> RecordBatchHeader(
    const fb::Message& message, const std::string& file);

// Decodes the RecordBatch `message` over `body` (at least its announced
// body length) against `schema`. `storage` becomes the batch's buffer: pass
// the vector `body` lies in to keep it alive with the views, or an empty
// one when the caller keeps the bytes. Refuses dictionary batches and
// compressed bodies.
absl::StatusOr<RecordBatch> DecodeRecordBatch(const fb::Message& message,
                                              const Schema& schema,
                                              std::span<const std::byte> body,
                                              std::vector<std::byte> storage,
                                              const std::string& file);

// Where bytes lie in a record batch's body.
struct BodyRange {
  int64_t offset = 0;
  int64_t length = 0;
};

// For the record batch `batch` with a `body_bytes`-byte body: where the
// values of each of `columns` (top-level indexes into `schema`, each with
// FixedRowBytes > 0) lie, exactly batch.length() rows of them; nullopt
// when one of those columns has a null in this batch. Checks what the
// decoder checks of those columns (lengths, buffers inside the body) and
// the batch's node and buffer counts against the schema.
absl::StatusOr<std::optional<std::vector<BodyRange>>> LocateFixedRowValues(
    const fb::RecordBatch& batch, const Schema& schema,
    std::span<const int> columns, int64_t body_bytes, const std::string& file);

// Where the footer flatbuffer lies, from the last kFileTailBytes bytes of a
// `file_size`-byte file.
struct FooterLocation {
  int64_t offset = 0;
  int64_t length = 0;
};
absl::StatusOr<FooterLocation> LocateFooter(std::span<const std::byte> tail,
                                            int64_t file_size,
                                            const std::string& file,
                                            const IpcLimits& limits);

// Verifies and parses the footer at `location`; every block is checked to
// lie between the file header and the footer.
absl::StatusOr<FileFooter> ParseFooter(std::span<const std::byte> footer,
                                       const FooterLocation& location,
                                       const std::string& file,
                                       const IpcLimits& limits);

// Decodes the record batch in `block_bytes` (the block's metadata and body
// bytes, `block` as the footer gave it). `storage`: as DecodeRecordBatch.
absl::StatusOr<RecordBatch> DecodeFileBlock(
    std::span<const std::byte> block_bytes, const FileBlock& block,
    const Schema& schema, std::vector<std::byte> storage,
    const std::string& file, const IpcLimits& limits);

}  // namespace sluice::io::arrow::internal

#endif  // SLUICE_IO_ARROW_INTERNAL_IPC_FORMAT_H_
