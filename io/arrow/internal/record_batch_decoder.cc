// DecodeRecordBatch: walks the schema in pre-order, taking one FieldNode
// and that type's buffers per array, and checks every length and offset
// before an ArrayView may point at the bytes.
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/arrow/internal/ipc_format.h"

namespace sluice::io::arrow::internal {
namespace {

// Bytes of a bitmap of `length` bits.
int64_t BitmapBytes(int64_t length) { return length / 8 + (length % 8 != 0); }

bool HasLargeOffsets(TypeId type) {
  return type == TypeId::kLargeBinary || type == TypeId::kLargeUtf8 ||
         type == TypeId::kLargeList;
}

class BatchDecoder {
 public:
  BatchDecoder(const fb::RecordBatch& batch, std::span<const std::byte> body,
               const std::string& file)
      : batch_(batch), body_(body), file_(file) {}

  absl::StatusOr<ArrayView> DecodeArray(const Field& field,
                                        const std::string& path);

  // Every node and buffer of the message was used.
  absl::Status CheckAllConsumed() const {
    const size_t nodes = batch_.nodes() ? batch_.nodes()->size() : 0;
    const size_t buffers = batch_.buffers() ? batch_.buffers()->size() : 0;
    if (next_node_ != nodes || next_buffer_ != buffers) {
      return absl::DataLossError(absl::StrCat(
          file_, ": the record batch has ", nodes, " field nodes and ", buffers,
          " buffers, the schema uses ", next_node_, " and ", next_buffer_));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Corrupt(const std::string& path, absl::string_view what) const {
    return absl::DataLossError(
        absl::StrCat(file_, ": column '", path, "': ", what));
  }

  absl::StatusOr<std::span<const std::byte>> NextBuffer(
      const std::string& path) {
    if (batch_.buffers() == nullptr ||
        next_buffer_ >= batch_.buffers()->size()) {
      return Corrupt(path, "the record batch has too few buffers");
    }
    const fb::Buffer buffer = LoadStruct(*batch_.buffers(), next_buffer_++);
    const int64_t offset = buffer.offset();
    const int64_t length = buffer.length();
    const int64_t body_size = static_cast<int64_t>(body_.size());
    if (offset < 0 || length < 0 || offset > body_size ||
        length > body_size - offset) {
      return Corrupt(path, absl::StrCat("buffer [", offset, ", +", length,
                                        ") lies outside the body of ",
                                        body_size, " bytes"));
    }
    return body_.subspan(offset, length);
  }

  // Checks (length + 1) offsets of `width` bytes: non-negative, monotonic,
  // the last at most `limit`. Returns the last offset.
  absl::StatusOr<int64_t> CheckOffsets(std::span<const std::byte> offsets,
                                       size_t width, int64_t length,
                                       int64_t limit, const std::string& path) {
    if (length == 0 && offsets.empty()) return 0;
    if (length >= static_cast<int64_t>(offsets.size() / width)) {
      return Corrupt(path,
                     absl::StrCat("offsets buffer of ", offsets.size(),
                                  " bytes is too short for ", length, " rows"));
    }
    int64_t previous = 0;
    for (int64_t i = 0; i <= length; ++i) {
      int64_t offset;
      if (width == 8) {
        std::memcpy(&offset, offsets.data() + i * 8, 8);
      } else {
        int32_t narrow;
        std::memcpy(&narrow, offsets.data() + i * 4, 4);
        offset = narrow;
      }
      if (offset < previous || offset > limit) {
        return Corrupt(path, absl::StrCat("offset ", offset, " of row ", i,
                                          " is out of order or past the end (",
                                          limit, ")"));
      }
      previous = offset;
    }
    return previous;
  }

  const fb::RecordBatch& batch_;
  std::span<const std::byte> body_;
  const std::string& file_;
  size_t next_node_ = 0;
  size_t next_buffer_ = 0;
};

absl::StatusOr<ArrayView> BatchDecoder::DecodeArray(const Field& field,
                                                    const std::string& path) {
  if (batch_.nodes() == nullptr || next_node_ >= batch_.nodes()->size()) {
    return Corrupt(path, "the record batch has too few field nodes");
  }
  const fb::FieldNode node = LoadStruct(*batch_.nodes(), next_node_++);
  ArrayView::Parts parts;
  parts.type = field.type;
  parts.list_size = field.list_size;
  parts.length = node.length();
  parts.null_count = node.null_count();
  if (parts.length < 0 || parts.null_count < 0 ||
      parts.null_count > parts.length) {
    return Corrupt(path, absl::StrCat("invalid length ", parts.length,
                                      " or null count ", parts.null_count));
  }
  absl::StatusOr<std::span<const std::byte>> validity = NextBuffer(path);
  if (!validity.ok()) return validity.status();
  if (parts.null_count > 0) {
    if (static_cast<int64_t>(validity->size()) < BitmapBytes(parts.length)) {
      return Corrupt(path, absl::StrCat("validity bitmap of ", validity->size(),
                                        " bytes for ", parts.length, " rows"));
    }
    parts.validity = validity->first(BitmapBytes(parts.length));
  }

  const size_t width = FixedWidthBytes(field.type);
  if (width != 0 || field.type == TypeId::kBool) {
    absl::StatusOr<std::span<const std::byte>> values = NextBuffer(path);
    if (!values.ok()) return values.status();
    const bool too_short =
        width != 0
            ? parts.length > static_cast<int64_t>(values->size() / width)
            : static_cast<int64_t>(values->size()) < BitmapBytes(parts.length);
    if (too_short) {
      return Corrupt(path, absl::StrCat("values buffer of ", values->size(),
                                        " bytes for ", parts.length, " rows"));
    }
    parts.values = *values;
  } else if (IsBinaryLike(field.type) || field.type == TypeId::kList ||
             field.type == TypeId::kLargeList) {
    absl::StatusOr<std::span<const std::byte>> offsets = NextBuffer(path);
    if (!offsets.ok()) return offsets.status();
    parts.offsets = *offsets;
    const size_t offset_width = HasLargeOffsets(field.type) ? 8 : 4;
    if (IsBinaryLike(field.type)) {
      absl::StatusOr<std::span<const std::byte>> data = NextBuffer(path);
      if (!data.ok()) return data.status();
      parts.values = *data;
      absl::StatusOr<int64_t> last =
          CheckOffsets(*offsets, offset_width, parts.length,
                       static_cast<int64_t>(data->size()), path);
      if (!last.ok()) return last.status();
    } else {
      const std::string child_path =
          absl::StrCat(path, ".", field.children[0].name);
      absl::StatusOr<ArrayView> child =
          DecodeArray(field.children[0], child_path);
      if (!child.ok()) return child.status();
      absl::StatusOr<int64_t> last = CheckOffsets(
          *offsets, offset_width, parts.length, child->length(), path);
      if (!last.ok()) return last.status();
      parts.children.push_back(*std::move(child));
    }
  } else {
    // fixed_size_list and struct: a validity bitmap and children only.
    for (const Field& child_field : field.children) {
      absl::StatusOr<ArrayView> child =
          DecodeArray(child_field, absl::StrCat(path, ".", child_field.name));
      if (!child.ok()) return child.status();
      const bool too_short =
          field.type == TypeId::kFixedSizeList
              ? field.list_size != 0 &&
                    parts.length > child->length() / field.list_size
              : child->length() < parts.length;
      if (too_short) {
        return Corrupt(path, absl::StrCat("child '", child_field.name, "' has ",
                                          child->length(),
                                          " rows, too few for ", parts.length));
      }
      parts.children.push_back(*std::move(child));
    }
  }
  return ArrayView(std::move(parts));
}

// Field nodes and buffers an array of `field` takes in a record batch,
// children included, in the IPC format's pre-order layout.
std::pair<size_t, size_t> NodesAndBuffers(const Field& field) {
  size_t buffers = 2;  // validity, then values (or offsets)
  if (IsBinaryLike(field.type)) buffers = 3;
  if (field.type == TypeId::kFixedSizeList || field.type == TypeId::kStruct) {
    buffers = 1;
  }
  size_t nodes = 1;
  for (const Field& child : field.children) {
    const auto [child_nodes, child_buffers] = NodesAndBuffers(child);
    nodes += child_nodes;
    buffers += child_buffers;
  }
  return {nodes, buffers};
}

}  // namespace

absl::StatusOr<std::optional<std::vector<BodyRange>>> LocateFixedRowValues(
    const fb::RecordBatch& batch, const Schema& schema,
    std::span<const int> columns, int64_t body_bytes, const std::string& file) {
  // The first node and buffer of each top-level column.
  std::vector<std::pair<size_t, size_t>> starts;
  size_t nodes = 0;
  size_t buffers = 0;
  for (const Field& field : schema.fields) {
    starts.emplace_back(nodes, buffers);
    const auto [field_nodes, field_buffers] = NodesAndBuffers(field);
    nodes += field_nodes;
    buffers += field_buffers;
  }
  const size_t batch_nodes = batch.nodes() ? batch.nodes()->size() : 0;
  const size_t batch_buffers = batch.buffers() ? batch.buffers()->size() : 0;
  if (batch_nodes != nodes || batch_buffers != buffers) {
    return absl::DataLossError(absl::StrCat(
        file, ": the record batch has ", batch_nodes, " field nodes and ",
        batch_buffers, " buffers, the schema uses ", nodes, " and ", buffers));
  }
  const int64_t rows = batch.length();
  std::vector<BodyRange> ranges;
  for (int column : columns) {
    const Field& field = schema.fields[column];
    if (FixedRowBytes(field) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": column '", field.name, "' does not hold fixed-size rows"));
    }
    const auto corrupt = [&](absl::string_view what) {
      return absl::DataLossError(
          absl::StrCat(file, ": column '", field.name, "': ", what));
    };
    auto [node, buffer] = starts[column];
    // The array holding the values: the column, or its fixed_size_list's
    // child (whose validity buffer follows the list's).
    int64_t values = rows;
    for (int level = 0; level < 2; ++level) {
      const fb::FieldNode array = LoadStruct(*batch.nodes(), node);
      if (array.length() != values) {
        return corrupt(absl::StrCat("has ", array.length(), " values, the ",
                                    "record batch's rows need ", values));
      }
      if (array.null_count() != 0) return std::nullopt;
      if (field.type != TypeId::kFixedSizeList || level == 1) break;
      if (values > std::numeric_limits<int64_t>::max() / field.list_size) {
        return corrupt("too many values");
      }
      values *= field.list_size;
      ++node;
      ++buffer;
    }
    const int64_t width =
        static_cast<int64_t>(FixedRowBytes(field)) /
        (field.type == TypeId::kFixedSizeList ? field.list_size : 1);
    const fb::Buffer found = LoadStruct(*batch.buffers(), buffer + 1);
    if (found.offset() < 0 || found.length() < 0 ||
        found.offset() > body_bytes ||
        found.length() > body_bytes - found.offset()) {
      return corrupt(absl::StrCat("buffer [", found.offset(), ", +",
                                  found.length(), ") lies outside the body of ",
                                  body_bytes, " bytes"));
    }
    if (values > found.length() / width) {
      return corrupt(absl::StrCat("values buffer of ", found.length(),
                                  " bytes for ", values, " values"));
    }
    ranges.push_back({.offset = found.offset(), .length = values * width});
  }
  return ranges;
}

absl::StatusOr<const fb::RecordBatch*> RecordBatchHeader(
    const fb::Message& message, const std::string& file) {
  switch (message.header_type()) {
    case fb::MessageHeader_RecordBatch:
      break;
    case fb::MessageHeader_DictionaryBatch:
      return absl::UnimplementedError(absl::StrCat(
          file,
          ": dictionary batches (dictionary encoding) are not supported"));
    default:
      return absl::DataLossError(
          absl::StrCat(file, ": expected a RecordBatch message, found ",
                       fb::EnumNameMessageHeader(message.header_type())));
  }
  const fb::RecordBatch* batch = message.header_as_RecordBatch();
  if (batch == nullptr) {
    return absl::DataLossError(
        absl::StrCat(file, ": a RecordBatch message without its header"));
  }
  if (batch->compression() != nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(file, ": buffer compression (BodyCompression, codec ",
                     fb::EnumNameCompressionType(batch->compression()->codec()),
                     ") is not supported"));
  }
  if (batch->length() < 0) {
    return absl::DataLossError(
        absl::StrCat(file, ": negative record batch length ", batch->length()));
  }
  return batch;
}

absl::StatusOr<RecordBatch> DecodeRecordBatch(const fb::Message& message,
                                              const Schema& schema,
                                              std::span<const std::byte> body,
                                              std::vector<std::byte> storage,
                                              const std::string& file) {
  absl::StatusOr<const fb::RecordBatch*> header =
      RecordBatchHeader(message, file);
  if (!header.ok()) return header.status();
  const fb::RecordBatch& batch = **header;
  BatchDecoder decoder(batch, body, file);
  std::vector<ArrayView> columns;
  columns.reserve(schema.fields.size());
  for (const Field& field : schema.fields) {
    absl::StatusOr<ArrayView> column = decoder.DecodeArray(field, field.name);
    if (!column.ok()) return column.status();
    if (column->length() != batch.length()) {
      return absl::DataLossError(absl::StrCat(
          file, ": column '", field.name, "' has ", column->length(),
          " rows, the record batch ", batch.length()));
    }
    columns.push_back(*std::move(column));
  }
  absl::Status consumed = decoder.CheckAllConsumed();
  if (!consumed.ok()) return consumed;
  return RecordBatch(batch.length(), std::move(columns), std::move(storage));
}

}  // namespace sluice::io::arrow::internal
