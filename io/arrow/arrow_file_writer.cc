#include "io/arrow/arrow_file_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/arrow/internal/arrow_ipc_generated.h"

namespace sluice::io::arrow {
namespace {

namespace fb = ::org::apache::arrow::flatbuf;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr char kMagic[] = "ARROW1";

int64_t Padded8(int64_t n) { return (n + 7) / 8 * 8; }

Offset<fb::Field> BuildField(FlatBufferBuilder& fbb,
                             const WriterColumn& column) {
  const auto name = fbb.CreateString(column.name);
  std::vector<Offset<fb::Field>> children;
  fb::Type type = fb::Type_NONE;
  Offset<void> table;
  switch (column.type) {
    case TypeId::kBinary:
      type = fb::Type_Binary;
      table = fb::CreateBinary(fbb).Union();
      break;
    case TypeId::kUtf8:
      type = fb::Type_Utf8;
      table = fb::CreateUtf8(fbb).Union();
      break;
    case TypeId::kInt64:
      type = fb::Type_Int;
      table = fb::CreateInt(fbb, 64, true).Union();
      break;
    case TypeId::kFloat32:
      type = fb::Type_FloatingPoint;
      table = fb::CreateFloatingPoint(fbb, fb::Precision_SINGLE).Union();
      break;
    case TypeId::kStruct:
      for (const WriterColumn& child : column.children) {
        children.push_back(BuildField(fbb, child));
      }
      type = fb::Type_Struct_;
      table = fb::CreateStruct_(fbb).Union();
      break;
    default: {  // kFixedSizeList of float32 (checked by Create)
      const auto item = fbb.CreateString("item");
      const auto item_type =
          fb::CreateFloatingPoint(fbb, fb::Precision_SINGLE).Union();
      children.push_back(fb::CreateField(fbb, item, /*nullable=*/true,
                                         fb::Type_FloatingPoint, item_type));
      type = fb::Type_FixedSizeList;
      table = fb::CreateFixedSizeList(fbb, column.list_size).Union();
      break;
    }
  }
  return fb::CreateField(fbb, name, /*nullable=*/true, type, table,
                         /*dictionary=*/0, fbb.CreateVector(children));
}

Offset<fb::Schema> BuildSchema(FlatBufferBuilder& fbb,
                               const std::vector<WriterColumn>& columns) {
  std::vector<Offset<fb::Field>> fields;
  for (const WriterColumn& column : columns) {
    fields.push_back(BuildField(fbb, column));
  }
  return fb::CreateSchema(fbb, fb::Endianness_Little, fbb.CreateVector(fields));
}

int64_t NullCount(std::span<const uint8_t> validity, int64_t rows) {
  if (validity.empty()) return 0;
  int64_t valid = 0;
  for (int64_t i = 0; i < rows; ++i) valid += (validity[i >> 3] >> (i & 7)) & 1;
  return rows - valid;
}

// Appends `bytes` to `body`, 8-byte aligned, and records its buffer.
void AddBuffer(std::vector<std::byte>& body, std::vector<fb::Buffer>& buffers,
               std::span<const std::byte> bytes) {
  const int64_t offset = static_cast<int64_t>(body.size());
  body.insert(body.end(), bytes.begin(), bytes.end());
  body.resize(Padded8(static_cast<int64_t>(body.size())));
  buffers.emplace_back(offset, static_cast<int64_t>(bytes.size()));
}

// Whether the writer can write `column` (and its members); otherwise
// `unsupported` names the first column it cannot write, qualified by
// `prefix`, and its type.
bool Supported(const WriterColumn& column, const std::string& prefix,
               std::string& unsupported) {
  const std::string name = prefix + column.name;
  bool ok = column.children.empty();
  switch (column.type) {
    case TypeId::kBinary:
    case TypeId::kUtf8:
    case TypeId::kInt64:
    case TypeId::kFloat32:
      break;
    case TypeId::kFixedSizeList:
      ok = ok && column.list_size > 0;
      break;
    case TypeId::kStruct:
      ok = !column.children.empty();
      for (const WriterColumn& child : column.children) {
        if (!Supported(child, name + ".", unsupported)) return false;
      }
      break;
    default:
      ok = false;
      break;
  }
  if (!ok) {
    unsupported = absl::StrCat("'", name, "' of type ",
                               std::string(TypeName(column.type)));
  }
  return ok;
}

// Appends the field nodes and buffers of one column (depth first, as the
// IPC format orders them) after checking its values against `rows`.
absl::Status AddColumn(const std::string& path, const std::string& name,
                       const WriterColumn& column, const ColumnValues& values,
                       int64_t rows, std::vector<fb::FieldNode>& nodes,
                       std::vector<fb::Buffer>& buffers,
                       std::vector<std::byte>& body) {
  const auto mismatch = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": column '", name,
                                                   "': ", std::string(what),
                                                   " for ", rows, " rows"));
  };
  if (!values.validity.empty() &&
      static_cast<int64_t>(values.validity.size()) < (rows + 7) / 8) {
    return mismatch("validity bitmap too short");
  }
  nodes.emplace_back(rows, NullCount(values.validity, rows));
  AddBuffer(body, buffers, std::as_bytes(values.validity));
  switch (column.type) {
    case TypeId::kBinary:
    case TypeId::kUtf8:
      if (static_cast<int64_t>(values.offsets.size()) != rows + 1 ||
          values.offsets.front() != 0 ||
          values.offsets.back() != static_cast<int64_t>(values.bytes.size())) {
        return mismatch("offsets do not match the bytes");
      }
      AddBuffer(body, buffers, std::as_bytes(values.offsets));
      AddBuffer(body, buffers, values.bytes);
      break;
    case TypeId::kInt64:
      if (static_cast<int64_t>(values.int64.size()) != rows) {
        return mismatch("wrong number of int64 values");
      }
      AddBuffer(body, buffers, std::as_bytes(values.int64));
      break;
    case TypeId::kFloat32:
      if (static_cast<int64_t>(values.float32.size()) != rows) {
        return mismatch("wrong number of float32 values");
      }
      AddBuffer(body, buffers, std::as_bytes(values.float32));
      break;
    case TypeId::kStruct:
      if (values.children.size() != column.children.size()) {
        return mismatch(absl::StrCat(values.children.size(),
                                     " member values given, the struct has ",
                                     column.children.size()));
      }
      for (size_t i = 0; i < column.children.size(); ++i) {
        if (absl::Status status = AddColumn(
                path, absl::StrCat(name, ".", column.children[i].name),
                column.children[i], values.children[i], rows, nodes, buffers,
                body);
            !status.ok()) {
          return status;
        }
      }
      break;
    default:  // kFixedSizeList of float32 (checked by Create)
      if (static_cast<int64_t>(values.float32.size()) !=
          rows * column.list_size) {
        return mismatch("wrong number of float32 values");
      }
      nodes.emplace_back(rows * column.list_size, 0);
      AddBuffer(body, buffers, {});
      AddBuffer(body, buffers, std::as_bytes(values.float32));
      break;
  }
  return absl::OkStatus();
}

}  // namespace

WriterColumn BinaryColumn(std::string name) {
  return {.name = std::move(name), .type = TypeId::kBinary};
}
WriterColumn Utf8Column(std::string name) {
  return {.name = std::move(name), .type = TypeId::kUtf8};
}
WriterColumn Int64Column(std::string name) {
  return {.name = std::move(name), .type = TypeId::kInt64};
}
WriterColumn Float32Column(std::string name) {
  return {.name = std::move(name), .type = TypeId::kFloat32};
}
WriterColumn Float32VectorColumn(std::string name, int32_t list_size) {
  return {.name = std::move(name),
          .type = TypeId::kFixedSizeList,
          .list_size = list_size};
}
WriterColumn StructColumn(std::string name,
                          std::vector<WriterColumn> children) {
  return {.name = std::move(name),
          .type = TypeId::kStruct,
          .children = std::move(children)};
}

ArrowFileWriter::ArrowFileWriter(std::string path, std::string temp_path,
                                 std::vector<WriterColumn> columns,
                                 std::FILE* file)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      columns_(std::move(columns)),
      file_(file) {}

ArrowFileWriter::~ArrowFileWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    ::unlink(temp_path_.c_str());
  }
}

absl::StatusOr<std::unique_ptr<ArrowFileWriter>> ArrowFileWriter::Create(
    std::string path, std::vector<WriterColumn> columns) {
  for (const WriterColumn& column : columns) {
    std::string unsupported;
    if (!Supported(column, "", unsupported)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": column ", unsupported,
          " is not writable (the writer knows binary, utf8, int64, float32, "
          "fixed_size_list<float32> with a positive size and structs of at "
          "least one of these)"));
    }
  }
  const std::filesystem::path target(path);
  const std::string temp_path =
      (target.parent_path() /
       absl::StrCat(".", target.filename().string(), ".tmp"))
          .string();
  std::FILE* file = std::fopen(temp_path.c_str(), "wb");
  if (file == nullptr) {
    return absl::UnavailableError(
        absl::StrCat(temp_path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<ArrowFileWriter> writer(new ArrowFileWriter(
      std::move(path), temp_path, std::move(columns), file));
  constexpr std::byte kHeader[8] = {std::byte{'A'}, std::byte{'R'},
                                    std::byte{'R'}, std::byte{'O'},
                                    std::byte{'W'}, std::byte{'1'}};
  if (absl::Status status = writer->Write(kHeader); !status.ok()) {
    return status;
  }
  FlatBufferBuilder fbb;
  const Offset<fb::Schema> schema = BuildSchema(fbb, writer->columns_);
  fbb.Finish(fb::CreateMessage(fbb, fb::MetadataVersion_V5,
                               fb::MessageHeader_Schema, schema.Union(), 0));
  int64_t metadata_bytes = 0;
  if (absl::Status status = writer->WriteMessage(
          {fbb.GetBufferPointer(), fbb.GetSize()}, {}, &metadata_bytes);
      !status.ok()) {
    return status;
  }
  return writer;
}

absl::Status ArrowFileWriter::Write(std::span<const std::byte> bytes) {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": writer already finished"));
  }
  if (!bytes.empty() &&
      std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return absl::UnavailableError(
        absl::StrCat(temp_path_, ": write failed: ", std::strerror(errno)));
  }
  position_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::Status ArrowFileWriter::WriteMessage(std::span<const uint8_t> metadata,
                                           std::span<const std::byte> body,
                                           int64_t* metadata_bytes) {
  // Continuation marker, padded metadata length, metadata, padding: a
  // multiple of 8 bytes, so the body stays aligned.
  const int64_t padded = Padded8(8 + static_cast<int64_t>(metadata.size())) - 8;
  std::vector<std::byte> head(8 + padded);
  const int32_t marker = -1;
  const int32_t length = static_cast<int32_t>(padded);
  std::memcpy(head.data(), &marker, 4);
  std::memcpy(head.data() + 4, &length, 4);
  std::memcpy(head.data() + 8, metadata.data(), metadata.size());
  *metadata_bytes = static_cast<int64_t>(head.size());
  if (absl::Status status = Write(head); !status.ok()) return status;
  return Write(body);
}

absl::Status ArrowFileWriter::WriteRecordBatch(
    int64_t rows, const std::vector<ColumnValues>& columns) {
  if (columns.size() != columns_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": ", columns.size(), " columns given, schema has ",
                     columns_.size()));
  }
  std::vector<fb::FieldNode> nodes;
  std::vector<fb::Buffer> buffers;
  body_.clear();
  for (size_t c = 0; c < columns.size(); ++c) {
    if (absl::Status status =
            AddColumn(path_, columns_[c].name, columns_[c], columns[c], rows,
                      nodes, buffers, body_);
        !status.ok()) {
      return status;
    }
  }
  FlatBufferBuilder fbb;
  const auto batch =
      fb::CreateRecordBatch(fbb, rows, fbb.CreateVectorOfStructs(nodes),
                            fbb.CreateVectorOfStructs(buffers));
  fbb.Finish(fb::CreateMessage(fbb, fb::MetadataVersion_V5,
                               fb::MessageHeader_RecordBatch, batch.Union(),
                               static_cast<int64_t>(body_.size())));
  Block block{position_, 0, static_cast<int64_t>(body_.size())};
  int64_t metadata_bytes = 0;
  if (absl::Status status = WriteMessage(
          {fbb.GetBufferPointer(), fbb.GetSize()}, body_, &metadata_bytes);
      !status.ok()) {
    return status;
  }
  block.metadata_bytes = static_cast<int32_t>(metadata_bytes);
  blocks_.push_back(block);
  return absl::OkStatus();
}

absl::Status ArrowFileWriter::Finish() {
  constexpr int32_t kEndOfStream[2] = {-1, 0};
  if (absl::Status status = Write(std::as_bytes(std::span(kEndOfStream)));
      !status.ok()) {
    return status;
  }
  FlatBufferBuilder fbb;
  const Offset<fb::Schema> schema = BuildSchema(fbb, columns_);
  std::vector<fb::Block> blocks;
  for (const Block& block : blocks_) {
    blocks.emplace_back(block.offset, block.metadata_bytes, block.body_bytes);
  }
  const auto record_batches = fbb.CreateVectorOfStructs(blocks);
  const auto dictionaries = fbb.CreateVectorOfStructs<fb::Block>({});
  fbb.Finish(fb::CreateFooter(fbb, fb::MetadataVersion_V5, schema, dictionaries,
                              record_batches));
  const int32_t footer_bytes = static_cast<int32_t>(fbb.GetSize());
  if (absl::Status status = Write(
          std::as_bytes(std::span(fbb.GetBufferPointer(), fbb.GetSize())));
      !status.ok()) {
    return status;
  }
  if (absl::Status status = Write(std::as_bytes(std::span(&footer_bytes, 1)));
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          Write(std::as_bytes(std::span(kMagic, sizeof(kMagic) - 1)));
      !status.ok()) {
    return status;
  }
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!closed || std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_path_.c_str());
    return absl::UnavailableError(absl::StrCat(
        path_,
        ": could not close and rename into place: ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace sluice::io::arrow
