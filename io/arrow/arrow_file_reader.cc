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

// The message in record batch `index`'s metadata bytes `all` (prefix and
// flatbuffer), verified.
absl::StatusOr<internal::VerifiedMessage> VerifyMetadata(
    std::span<const std::byte> all, size_t index, const std::string& path,
    const IpcLimits& limits) {
  absl::StatusOr<internal::MessagePrefix> prefix = internal::ParseMessagePrefix(
      all.first(std::min<size_t>(all.size(), internal::kMaxPrefixBytes)), path,
      limits);
  if (!prefix.ok()) return prefix.status();
  if (prefix->end_of_stream || prefix->prefix_bytes + prefix->metadata_bytes >
                                   static_cast<int64_t>(all.size())) {
    return absl::DataLossError(absl::StrCat(path, ": record batch ", index,
                                            " metadata overruns its block"));
  }
  return internal::VerifiedMessage::Verify(
      all.subspan(prefix->prefix_bytes, prefix->metadata_bytes), path);
}

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
                      IpcLimits limits, bool direct_io) {
  absl::StatusOr<internal::ReadOnlyFile> file =
      internal::ReadOnlyFile::Open(std::move(path), direct_io);
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
  const std::array<AsyncFileReader::ReadRequest, 2> requests = {
      file->Request(0, head),
      file->Request(size - internal::kFileTailBytes, tail)};
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

asio::awaitable<absl::Status> ArrowFileReader::ForEachRecordBatchHeader(
    const HeaderVisitor& visit) const {
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
      const internal::FileBlock& block = footer_.record_batches[i];
      absl::StatusOr<internal::VerifiedMessage> message =
          VerifyMetadata(regions[i - first].buffer, i, path(), limits_);
      if (!message.ok()) co_return message.status();
      absl::StatusOr<const internal::fb::RecordBatch*> header =
          internal::RecordBatchHeader(message->get(), path());
      if (!header.ok()) co_return header.status();
      absl::StatusOr<int64_t> body_bytes =
          internal::MessageBodyLength(message->get(), path(), limits_);
      if (!body_bytes.ok()) co_return body_bytes.status();
      if (*body_bytes > block.body_bytes) {
        co_return absl::DataLossError(
            absl::StrCat(path(), ": the message at offset ", block.offset,
                         " announces a body of ", *body_bytes,
                         " bytes, its block holds ", block.body_bytes));
      }
      absl::Status visited = visit(i, **header, *body_bytes);
      if (!visited.ok()) co_return visited;
    }
  }
  co_return absl::OkStatus();
}

asio::awaitable<absl::StatusOr<std::vector<int64_t>>>
ArrowFileReader::RecordBatchRows() const {
  std::vector<int64_t> rows;
  rows.reserve(footer_.record_batches.size());
  absl::Status status = co_await ForEachRecordBatchHeader(
      [&](size_t, const internal::fb::RecordBatch& header, int64_t) {
        rows.push_back(header.length());
        return absl::OkStatus();
      });
  if (!status.ok()) co_return status;
  co_return rows;
}

asio::awaitable<absl::StatusOr<std::optional<ArrowFileReader::ColumnLayout>>>
ArrowFileReader::LocateColumns(std::span<const int> columns) const {
  ColumnLayout layout;
  for (int column : columns) {
    const size_t row_bytes =
        column < 0 || column >= static_cast<int>(schema().fields.size())
            ? 0
            : FixedRowBytes(schema().fields[column]);
    if (row_bytes == 0) {
      co_return absl::InvalidArgumentError(absl::StrCat(
          path(), ": column ", column, " does not hold fixed-size rows"));
    }
    layout.columns.push_back(column);
    layout.row_bytes.push_back(row_bytes);
  }
  layout.first_rows.push_back(0);
  bool has_null = false;
  absl::Status status = co_await ForEachRecordBatchHeader(
      [&](size_t index, const internal::fb::RecordBatch& header,
          int64_t body_bytes) -> absl::Status {
        if (has_null) return absl::OkStatus();
        absl::StatusOr<std::optional<std::vector<internal::BodyRange>>> found =
            internal::LocateFixedRowValues(header, schema(), columns,
                                           body_bytes, path());
        if (!found.ok()) return found.status();
        if (!found->has_value()) {
          has_null = true;
          return absl::OkStatus();
        }
        const internal::FileBlock& block = footer_.record_batches[index];
        // Bounded by the file's size: no overflow.
        layout.first_rows.push_back(layout.first_rows.back() + header.length());
        for (const internal::BodyRange& range : **found) {
          layout.value_offsets.push_back(block.offset + block.metadata_bytes +
                                         range.offset);
        }
        return absl::OkStatus();
      });
  if (!status.ok()) co_return status;
  if (has_null) co_return std::nullopt;  // read batch by batch instead
  co_return layout;
}

asio::awaitable<absl::StatusOr<RecordBatch>> ArrowFileReader::ReadColumnRows(
    const ColumnLayout& layout, int64_t first_row, int64_t rows,
    std::vector<std::byte> buffer) const {
  const int64_t all_rows = layout.first_rows.back();
  if (first_row < 0 || rows < 1 || first_row > all_rows - rows) {
    co_return absl::OutOfRangeError(
        absl::StrCat(path(), ": no rows [", first_row, ", +", rows,
                     ") (the file has ", all_rows, ")"));
  }
  const size_t columns = layout.columns.size();
  // The record batch holding `first_row`.
  size_t batch =
      static_cast<size_t>(std::upper_bound(layout.first_rows.begin(),
                                           layout.first_rows.end(), first_row) -
                          layout.first_rows.begin() - 1);
  // One run per column, each starting page-congruent with its first read
  // (a copy from the page cache to a different offset within a page can be
  // several times slower).
  constexpr size_t kPageBytes = 4096;
  size_t buffer_bytes = 0;
  for (size_t c = 0; c < columns; ++c) {
    buffer_bytes +=
        static_cast<size_t>(rows) * layout.row_bytes[c] + kPageBytes;
  }
  internal::GrowWithoutShrinking(buffer, buffer_bytes);
  std::vector<std::byte*> runs;
  std::byte* free = buffer.data();
  const int64_t skip = first_row - layout.first_rows[batch];
  for (size_t c = 0; c < columns; ++c) {
    const auto file_offset = static_cast<uintptr_t>(
        layout.value_offsets[batch * columns + c] +
        skip * static_cast<int64_t>(layout.row_bytes[c]));
    free += (file_offset - reinterpret_cast<uintptr_t>(free)) % kPageBytes;
    runs.push_back(free);
    free += static_cast<size_t>(rows) * layout.row_bytes[c];
  }
  std::vector<internal::ReadOnlyFile::Region> regions;
  for (int64_t row = first_row, filled = 0; filled < rows; ++batch) {
    const int64_t in_batch = row - layout.first_rows[batch];
    const int64_t take =
        std::min(layout.first_rows[batch + 1] - row, rows - filled);
    for (size_t c = 0; c < columns; ++c) {
      const auto row_bytes = static_cast<int64_t>(layout.row_bytes[c]);
      regions.push_back(
          {.offset =
               layout.value_offsets[batch * columns + c] + in_batch * row_bytes,
           .buffer = std::span(runs[c] + filled * row_bytes,
                               static_cast<size_t>(take * row_bytes))});
    }
    row += take;
    filled += take;
  }
  absl::Status read = co_await file_.ReadEachExactly(reader_, regions);
  if (!read.ok()) co_return read;
  std::vector<ArrayView> views(schema().fields.size());
  for (size_t c = 0; c < columns; ++c) {
    const Field& field = schema().fields[layout.columns[c]];
    const std::span<const std::byte> values(
        runs[c], static_cast<size_t>(rows) * layout.row_bytes[c]);
    ArrayView::Parts parts{
        .type = field.type, .list_size = field.list_size, .length = rows};
    if (field.type == TypeId::kFixedSizeList) {
      parts.children.push_back(ArrayView({.type = field.children[0].type,
                                          .length = rows * field.list_size,
                                          .values = values}));
    } else {
      parts.values = values;
    }
    views[layout.columns[c]] = ArrayView(std::move(parts));
  }
  co_return RecordBatch(rows, std::move(views), std::move(buffer));
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
