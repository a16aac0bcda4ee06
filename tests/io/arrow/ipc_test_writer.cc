#include "tests/io/arrow/ipc_test_writer.h"

#include <utility>

namespace sluice::io::arrow::testing {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

std::string Padded(std::string bytes) {
  bytes.resize((bytes.size() + 7) / 8 * 8, '\0');
  return bytes;
}

void AppendInt32(std::string& out, int32_t value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

Offset<void> TypeTable(FlatBufferBuilder& fbb, const TestField& field) {
  switch (field.type) {
    case fb::Type_Int:
      return fb::CreateInt(fbb, field.bit_width, field.is_signed).Union();
    case fb::Type_FloatingPoint:
      return fb::CreateFloatingPoint(fbb, field.precision).Union();
    case fb::Type_FixedSizeList:
      return fb::CreateFixedSizeList(fbb, field.list_size).Union();
    default:
      return Offset<void>(fbb.EndTable(fbb.StartTable()));
  }
}

Offset<fb::Field> BuildField(FlatBufferBuilder& fbb, const TestField& field) {
  std::vector<Offset<fb::Field>> children;
  for (const TestField& child : field.children) {
    children.push_back(BuildField(fbb, child));
  }
  const auto name = fbb.CreateString(field.name);
  const Offset<void> type =
      field.type == fb::Type_NONE ? Offset<void>() : TypeTable(fbb, field);
  Offset<fb::DictionaryEncoding> dictionary;
  if (field.dictionary) {
    dictionary =
        fb::CreateDictionaryEncoding(fbb, 0, fb::CreateInt(fbb, 32, true));
  }
  return fb::CreateField(fbb, name, field.nullable, field.type, type,
                         dictionary, fbb.CreateVector(children));
}

Offset<fb::Schema> BuildSchema(FlatBufferBuilder& fbb,
                               const TestSchema& schema) {
  std::vector<Offset<fb::Field>> fields;
  for (const TestField& field : schema.fields) {
    fields.push_back(BuildField(fbb, field));
  }
  return fb::CreateSchema(
      fbb, schema.big_endian ? fb::Endianness_Big : fb::Endianness_Little,
      fbb.CreateVector(fields));
}

// A finished Message flatbuffer.
std::string FinishMessage(FlatBufferBuilder& fbb, fb::MessageHeader type,
                          Offset<void> header, int64_t body_length) {
  fbb.Finish(fb::CreateMessage(fbb, fb::MetadataVersion_V5, type, header,
                               body_length));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                     fbb.GetSize());
}

// A framed message: prefix, padded metadata, body.
std::string Frame(const std::string& metadata, const std::string& body,
                  bool legacy_prefix) {
  std::string out;
  if (!legacy_prefix) AppendInt32(out, -1);
  const size_t prefix = out.size() + 4;
  const size_t padded = (prefix + metadata.size() + 7) / 8 * 8 - prefix;
  AppendInt32(out, static_cast<int32_t>(padded));
  out += metadata;
  out.resize(prefix + padded, '\0');
  return out + body;
}

std::string SchemaMessage(const TestSchema& schema, bool legacy_prefix) {
  FlatBufferBuilder fbb;
  const Offset<fb::Schema> built = BuildSchema(fbb, schema);
  return Frame(FinishMessage(fbb, fb::MessageHeader_Schema, built.Union(), 0),
               "", legacy_prefix);
}

// The framed batch message; `*metadata_bytes` gets the prefix + metadata
// size, `*body_bytes` the body size.
std::string BatchMessage(const TestBatch& batch, bool legacy_prefix,
                         int64_t* metadata_bytes, int64_t* body_bytes) {
  std::string body;
  std::vector<fb::Buffer> buffers;
  for (const TestBuffer& buffer : batch.buffers) {
    const int64_t offset = static_cast<int64_t>(body.size());
    body += Padded(buffer.bytes);
    buffers.emplace_back(buffer.offset.value_or(offset),
                         buffer.length.value_or(buffer.bytes.size()));
  }
  std::vector<fb::FieldNode> nodes;
  for (const auto& [length, null_count] : batch.nodes) {
    nodes.emplace_back(length, null_count);
  }
  FlatBufferBuilder fbb;
  Offset<fb::BodyCompression> compression;
  if (batch.compressed) compression = fb::CreateBodyCompression(fbb);
  const Offset<fb::RecordBatch> record_batch =
      fb::CreateRecordBatch(fbb, batch.length, fbb.CreateVectorOfStructs(nodes),
                            fbb.CreateVectorOfStructs(buffers), compression);
  const int64_t body_length =
      batch.body_length.value_or(static_cast<int64_t>(body.size()));
  std::string metadata =
      batch.dictionary_batch
          ? FinishMessage(
                fbb, fb::MessageHeader_DictionaryBatch,
                fb::CreateDictionaryBatch(fbb, 0, record_batch).Union(),
                body_length)
          : FinishMessage(fbb, fb::MessageHeader_RecordBatch,
                          record_batch.Union(), body_length);
  std::string framed = Frame(metadata, body, legacy_prefix);
  *body_bytes = static_cast<int64_t>(body.size());
  *metadata_bytes = static_cast<int64_t>(framed.size() - body.size());
  return framed;
}

}  // namespace

TestField Int32Field(std::string name) {
  return TestField{.name = std::move(name), .type = fb::Type_Int};
}

TestField Utf8Field(std::string name) {
  return TestField{.name = std::move(name), .type = fb::Type_Utf8};
}

std::string MakeStream(const TestSchema& schema,
                       const std::vector<TestBatch>& batches,
                       StreamOptions options) {
  std::string out = SchemaMessage(schema, options.legacy_prefix);
  for (const TestBatch& batch : batches) {
    int64_t metadata_bytes, body_bytes;
    out += BatchMessage(batch, options.legacy_prefix, &metadata_bytes,
                        &body_bytes);
  }
  if (options.end_marker) {
    if (!options.legacy_prefix) AppendInt32(out, -1);
    AppendInt32(out, 0);
  }
  return out;
}

std::string MakeFile(const TestSchema& schema,
                     const std::vector<TestBatch>& batches,
                     FileOptions options) {
  std::string out("ARROW1\0\0", 8);
  out += SchemaMessage(schema, /*legacy_prefix=*/false);
  std::vector<fb::Block> blocks;
  for (const TestBatch& batch : batches) {
    const int64_t offset = static_cast<int64_t>(out.size());
    int64_t metadata_bytes, body_bytes;
    out += BatchMessage(batch, /*legacy_prefix=*/false, &metadata_bytes,
                        &body_bytes);
    blocks.emplace_back(options.block_offset.value_or(offset),
                        static_cast<int32_t>(metadata_bytes), body_bytes);
  }
  AppendInt32(out, -1);  // end-of-stream marker, as Arrow writers do
  AppendInt32(out, 0);
  FlatBufferBuilder fbb;
  const Offset<fb::Schema> built = BuildSchema(fbb, schema);
  const auto record_batches = fbb.CreateVectorOfStructs(blocks);
  fbb.Finish(
      fb::CreateFooter(fbb, fb::MetadataVersion_V5, built, 0, record_batches));
  out.append(reinterpret_cast<const char*>(fbb.GetBufferPointer()),
             fbb.GetSize());
  AppendInt32(out, static_cast<int32_t>(fbb.GetSize()));
  out += "ARROW1";
  return out;
}

std::string Bitmap(std::initializer_list<bool> bits) {
  std::string bytes((bits.size() + 7) / 8, '\0');
  size_t i = 0;
  for (bool bit : bits) {
    if (bit) bytes[i / 8] = static_cast<char>(bytes[i / 8] | (1 << (i % 8)));
    ++i;
  }
  return bytes;
}

}  // namespace sluice::io::arrow::testing
