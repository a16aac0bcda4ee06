#include "io/arrow/arrow_file_reader.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/arrow/internal/ipc_format.h"

namespace sluice::io::arrow {
namespace {

// RecordBatchRows reads this many record batches' metadata at once, in
// about this many bytes at most.
constexpr size_t kMetadataReadsAtOnce = 64;
constexpr size_t kMetadataBytesAtOnce = size_t{1} << 20;

}  // namespace

bool IsArrowFileStart(std::span<const std::byte> head) {
  return head.size() >= kArrowFileMagicBytes && internal::HasFileMagic(head);
}

ArrowFileReader::ArrowFileReader(AsyncFileReader& reader,
                                 internal::ReadOnlyFile file, IpcLimits limits,
                                 internal::FileFooter footer)
    : reader_(reader),
      file_(std::move(file)),
      limits_(limits),
      footer_(std::move(footer)) {}

asio::awaitable<absl::StatusOr<std::unique_ptr<ArrowFileReader>>>
ArrowFileReader::Open(AsyncFileReader& reader, std::string path,
                      IpcLimits limits) {
  absl::StatusOr<internal::ReadOnlyFile> file =
      internal::ReadOnlyFile::Open(std::move(path));
  if (!file.ok()) co_return file.status();
  const std::string& name = file->path();
  const int64_t size = file->size();
  if (size < internal::kFileHeaderBytes + internal::kFileTailBytes) {
    co_return absl::DataLossError(absl::StrCat(
        name, ": too short for an Arrow IPC file (", size, " bytes)"));
  }
  // The magic at the start and the footer length + magic at the end, in
  // one round trip.
  std::array<std::byte, internal::kFileHeaderBytes> head;
  std::array<std::byte, internal::kFileTailBytes> tail;
  const std::array<AsyncFileReader::ReadRequest, 2> requests = {{
      {file->fd(), 0, head},
      {file->fd(), static_cast<uint64_t>(size - internal::kFileTailBytes),
       tail},
  }};
  std::vector<absl::StatusOr<size_t>> got =
      co_await reader.ReadBatchAt(requests);
  for (size_t i = 0; i < got.size(); ++i) {
    if (!got[i].ok()) {
      co_return absl::Status(
          got[i].status().code(),
          absl::StrCat(name, ": ", got[i].status().message()));
    }
    if (*got[i] != requests[i].buffer.size()) {
      co_return absl::DataLossError(
          absl::StrCat(name, ": file truncated while opening"));
    }
  }
  if (!internal::HasFileMagic(head)) {
    co_return absl::DataLossError(
        absl::StrCat(name,
                     ": no ARROW1 magic at the start (not an Arrow IPC file; "
                     "ArrowStreamReader reads the stream format)"));
  }
  absl::StatusOr<internal::FooterLocation> location =
      internal::LocateFooter(tail, size, name, limits);
  if (!location.ok()) co_return location.status();
  std::vector<std::byte> footer_bytes(location->length);
  absl::Status read =
      co_await file->ReadExactly(reader, location->offset, footer_bytes);
  if (!read.ok()) co_return read;
  absl::StatusOr<internal::FileFooter> footer =
      internal::ParseFooter(footer_bytes, *location, name, limits);
  if (!footer.ok()) co_return footer.status();
  co_return std::unique_ptr<ArrowFileReader>(new ArrowFileReader(
      reader, *std::move(file), limits, *std::move(footer)));
}

asio::awaitable<absl::StatusOr<std::vector<int64_t>>>
ArrowFileReader::RecordBatchRows() const {
  std::vector<int64_t> rows;
  rows.reserve(footer_.record_batches.size());
  std::vector<std::byte> bytes;
  std::vector<internal::ReadOnlyFile::Region> regions;
  const size_t blocks = footer_.record_batches.size();
  for (size_t first = 0, end = 0; first < blocks; first = end) {
    // Up to kMetadataReadsAtOnce blocks, and past kMetadataBytesAtOnce only
    // by the last one (each block's metadata is bounded by IpcLimits).
    size_t total = 0;
    for (end = first; end < blocks && end - first < kMetadataReadsAtOnce &&
                      total < kMetadataBytesAtOnce;
         ++end) {
      total += static_cast<size_t>(footer_.record_batches[end].metadata_bytes);
    }
    bytes.resize(total);
    regions.clear();
    size_t at = 0;
    for (size_t i = first; i < end; ++i) {
      const internal::FileBlock& block = footer_.record_batches[i];
      const auto size = static_cast<size_t>(block.metadata_bytes);
      regions.push_back({.offset = block.offset,
                         .buffer = std::span(bytes).subspan(at, size)});
      at += size;
    }
    absl::Status read = co_await file_.ReadEachExactly(reader_, regions);
    if (!read.ok()) co_return read;
    for (size_t i = first; i < end; ++i) {
      absl::StatusOr<int64_t> batch_rows =
          RowsFromMetadata(regions[i - first].buffer, i);
      if (!batch_rows.ok()) co_return batch_rows.status();
      rows.push_back(*batch_rows);
    }
  }
  co_return rows;
}

absl::StatusOr<int64_t> ArrowFileReader::RowsFromMetadata(
    std::span<const std::byte> all, size_t index) const {
  absl::StatusOr<internal::MessagePrefix> prefix = internal::ParseMessagePrefix(
      all.first(std::min<size_t>(all.size(), internal::kMaxPrefixBytes)),
      path(), limits_);
  if (!prefix.ok()) return prefix.status();
  if (prefix->end_of_stream || prefix->prefix_bytes + prefix->metadata_bytes >
                                   static_cast<int64_t>(all.size())) {
    return absl::DataLossError(absl::StrCat(path(), ": record batch ", index,
                                            " metadata overruns its block"));
  }
  absl::StatusOr<internal::VerifiedMessage> message =
      internal::VerifiedMessage::Verify(
          all.subspan(prefix->prefix_bytes, prefix->metadata_bytes), path());
  if (!message.ok()) return message.status();
  absl::StatusOr<const internal::fb::RecordBatch*> header =
      internal::RecordBatchHeader(message->get(), path());
  if (!header.ok()) return header.status();
  return (*header)->length();
}

asio::awaitable<absl::StatusOr<RecordBatch>> ArrowFileReader::ReadRecordBatch(
    int index, std::vector<std::byte> buffer) const {
  if (index < 0 || index >= num_record_batches()) {
    co_return absl::OutOfRangeError(absl::StrCat(path(), ": no record batch ",
                                                 index, " (the file has ",
                                                 num_record_batches(), ")"));
  }
  const internal::FileBlock& block = footer_.record_batches[index];
  const std::span<std::byte> bytes = internal::PageCongruentSpan(
      buffer, block.offset,
      static_cast<size_t>(block.metadata_bytes + block.body_bytes));
  absl::Status read = co_await file_.ReadExactly(reader_, block.offset, bytes);
  if (!read.ok()) co_return read;
  // The span stays valid when `buffer` moves into the batch.
  co_return internal::DecodeFileBlock(bytes, block, footer_.schema,
                                      std::move(buffer), path(), limits_);
}

}  // namespace sluice::io::arrow
