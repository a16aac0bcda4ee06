#include "io/batch_file_meta.h"

#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "io/atomic_file.h"
#include "nlohmann/json.hpp"

namespace sluice {
namespace {

using Json = nlohmann::json;

constexpr char kMetaFile[] = "meta.json";

const std::set<std::string, std::less<>>& TrainingTypes() {
  static const auto* kTypes = new std::set<std::string, std::less<>>{
      "LM", "MLM", "CLASSIFICATION", "TOKEN_CLASSIFICATION", "SEQUENCE_SCORING",
      "LC0"};
  return *kTypes;
}

absl::Status KeyError(std::string_view where, std::string_view key,
                      std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(where), ": key '",
                                                 std::string(key), "' ",
                                                 std::string(problem)));
}

absl::StatusOr<std::string> GetString(const Json& object, std::string_view key,
                                      std::string_view where) {
  const auto it = object.find(std::string(key));
  if (it == object.end()) return KeyError(where, key, "is missing");
  if (!it->is_string() || it->get<std::string>().empty()) {
    return KeyError(where, key, "must be a non-empty string");
  }
  return it->get<std::string>();
}

absl::StatusOr<int64_t> GetPositive(const Json& object, std::string_view key,
                                    std::string_view where) {
  const auto it = object.find(std::string(key));
  if (it == object.end()) return KeyError(where, key, "is missing");
  if (!it->is_number_integer() || it->get<int64_t>() < 1) {
    return KeyError(where, key, "must be an integer >= 1");
  }
  return it->get<int64_t>();
}

absl::StatusOr<std::vector<FieldSpec>> ParseSchema(const Json& value,
                                                   std::string_view where) {
  if (!value.is_array() || value.empty()) {
    return KeyError(where, "batch_schema", "must be a non-empty list");
  }
  std::vector<FieldSpec> schema;
  std::set<std::string> names;
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& field = value[i];
    const std::string at =
        absl::StrCat(std::string(where), ": batch_schema[", i, "]");
    if (!field.is_object())
      return absl::InvalidArgumentError(at + " not an object");
    FieldSpec spec;
    auto name = GetString(field, "name", at);
    if (!name.ok()) return name.status();
    auto dtype = GetString(field, "dtype", at);
    if (!dtype.ok()) return dtype.status();
    auto role = GetString(field, "role", at);
    if (!role.ok()) return role.status();
    spec.name = *name;
    spec.dtype = *dtype;
    spec.role = *role;
    if (SafetensorsDtypeSize(spec.dtype) == 0) {
      return KeyError(at, "dtype",
                      absl::StrCat("has unknown value '", spec.dtype, "'"));
    }
    if (!names.insert(spec.name).second) {
      return KeyError(at, "name", absl::StrCat("'", spec.name, "' repeats"));
    }
    const auto shape = field.find("shape");
    if (shape == field.end()) return KeyError(at, "shape", "is missing");
    if (!shape->is_array()) return KeyError(at, "shape", "must be a list");
    for (const Json& dim : *shape) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
        return KeyError(at, "shape", "must hold integers >= 0");
      }
      spec.shape.push_back(dim.get<int64_t>());
    }
    schema.push_back(std::move(spec));
  }
  return schema;
}

Json SchemaToJson(const std::vector<FieldSpec>& schema) {
  Json out = Json::array();
  for (const FieldSpec& field : schema) {
    out.push_back({{"name", field.name},
                   {"dtype", field.dtype},
                   {"shape", field.shape},
                   {"role", field.role}});
  }
  return out;
}

absl::StatusOr<DatasetMeta> MetaFromJson(const Json& json) {
  constexpr std::string_view kWhere = "meta.json";
  if (!json.is_object()) {
    return absl::InvalidArgumentError("meta.json: not a JSON object");
  }
  DatasetMeta meta;
  auto name = GetString(json, "dataset_name", kWhere);
  if (!name.ok()) return name.status();
  meta.dataset_name = *name;
  auto type = GetString(json, "training_type", kWhere);
  if (!type.ok()) return type.status();
  if (!TrainingTypes().contains(*type)) {
    return KeyError(kWhere, "training_type",
                    absl::StrCat("has unknown value '", *type, "' (one of ",
                                 absl::StrJoin(TrainingTypes(), ", "), ")"));
  }
  meta.training_type = *type;
  auto batch_size = GetPositive(json, "batch_size", kWhere);
  if (!batch_size.ok()) return batch_size.status();
  meta.batch_size = *batch_size;
  const auto schema = json.find("batch_schema");
  if (schema == json.end())
    return KeyError(kWhere, "batch_schema", "is missing");
  auto fields = ParseSchema(*schema, kWhere);
  if (!fields.ok()) return fields.status();
  meta.batch_schema = *std::move(fields);
  const auto split_info = json.find("split_info");
  if (split_info == json.end())
    return KeyError(kWhere, "split_info", "is missing");
  if (!split_info->is_object()) {
    return KeyError(kWhere, "split_info", "must be an object");
  }
  meta.split_info_json = split_info->dump();
  for (auto [key, target] : {std::pair{"vocab_size", &meta.vocab_size},
                             std::pair{"block_size", &meta.block_size},
                             std::pair{"target_size", &meta.target_size}}) {
    if (!json.contains(key)) continue;
    auto value = GetPositive(json, key, kWhere);
    if (!value.ok()) return value.status();
    *target = *value;
  }
  return meta;
}

}  // namespace

absl::StatusOr<DatasetMeta> ParseDatasetMeta(std::string_view text) {
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return absl::InvalidArgumentError("meta.json: not valid JSON");
  }
  return MetaFromJson(json);
}

absl::StatusOr<std::string> SerializeDatasetMeta(const DatasetMeta& meta) {
  Json json = {{"dataset_name", meta.dataset_name},
               {"training_type", meta.training_type},
               {"batch_size", meta.batch_size},
               {"batch_schema", SchemaToJson(meta.batch_schema)}};
  json["split_info"] = Json::parse(meta.split_info_json, nullptr, false);
  if (meta.vocab_size) json["vocab_size"] = *meta.vocab_size;
  if (meta.block_size) json["block_size"] = *meta.block_size;
  if (meta.target_size) json["target_size"] = *meta.target_size;
  absl::StatusOr<DatasetMeta> check = MetaFromJson(json);
  if (!check.ok()) return check.status();
  return json.dump(2) + "\n";
}

absl::StatusOr<DatasetMeta> ReadDatasetMeta(const std::string& root) {
  absl::StatusOr<std::string> text =
      ReadWholeFile(absl::StrCat(root, "/", kMetaFile));
  if (!text.ok()) return text.status();
  return ParseDatasetMeta(*text);
}

absl::Status WriteDatasetMeta(const std::string& root,
                              const DatasetMeta& meta) {
  absl::StatusOr<std::string> text = SerializeDatasetMeta(meta);
  if (!text.ok()) return text.status();
  return WriteFileAtomically(root, kMetaFile, *text);
}

absl::Status CheckSameSchema(const std::vector<FieldSpec>& expected,
                             const std::vector<FieldSpec>& actual,
                             std::string_view context) {
  const auto mismatch = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(context), ": schema mismatch: ", std::string(what)));
  };
  if (expected.size() != actual.size()) {
    return mismatch(
        absl::StrCat(actual.size(), " fields, expected ", expected.size()));
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const FieldSpec& e = expected[i];
    const FieldSpec& a = actual[i];
    const std::string at = absl::StrCat("field ", i, " ('", e.name, "') ");
    if (e.name != a.name) return mismatch(at + "is named '" + a.name + "'");
    if (e.dtype != a.dtype) return mismatch(at + "has dtype '" + a.dtype + "'");
    if (e.shape != a.shape) {
      return mismatch(at + "has shape [" + absl::StrJoin(a.shape, ",") +
                      "], expected [" + absl::StrJoin(e.shape, ",") + "]");
    }
    if (e.role != a.role) return mismatch(at + "has role '" + a.role + "'");
  }
  return absl::OkStatus();
}

std::vector<TensorSpec> BatchFileTensors(const BatchFileInfo& info) {
  std::vector<TensorSpec> tensors;
  for (const FieldSpec& field : info.schema) {
    TensorSpec tensor{
        field.name, field.dtype, {info.num_batches * info.batch_size}};
    tensor.shape.insert(tensor.shape.end(), field.shape.begin(),
                        field.shape.end());
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

absl::StatusOr<std::string> EncodeBatchFileHeader(const BatchFileInfo& info) {
  const std::map<std::string, std::string> metadata = {
      {"batch_size", absl::StrCat(info.batch_size)},
      {"num_batches", absl::StrCat(info.num_batches)},
      {"sequence", absl::StrCat(info.sequence)},
      {"split", info.split},
      {"produced_at", absl::StrCat(info.produced_at_ms)},
      {"schema", SchemaToJson(info.schema).dump()}};
  return EncodeSafetensorsHeader(BatchFileTensors(info), metadata);
}

absl::StatusOr<BatchFileLayout> ParseBatchFile(std::string_view head,
                                               uint64_t file_size) {
  absl::StatusOr<SafetensorsFile> file = ParseSafetensors(head, file_size);
  if (!file.ok()) return file.status();
  const auto corrupt = [](std::string_view problem) {
    return absl::DataLossError(
        absl::StrCat("batch file: ", std::string(problem)));
  };
  BatchFileLayout layout;
  BatchFileInfo& info = layout.info;
  const auto number = [&](const char* key, int64_t* out) -> absl::Status {
    const auto it = file->metadata.find(key);
    if (it == file->metadata.end() || !absl::SimpleAtoi(it->second, out) ||
        *out < 0) {
      return corrupt(
          absl::StrCat("metadata '", key, "' missing or not a number"));
    }
    return absl::OkStatus();
  };
  for (auto [key, out] : {std::pair{"batch_size", &info.batch_size},
                          std::pair{"num_batches", &info.num_batches},
                          std::pair{"sequence", &info.sequence},
                          std::pair{"produced_at", &info.produced_at_ms}}) {
    absl::Status status = number(key, out);
    if (!status.ok()) return status;
  }
  if (info.batch_size < 1 || info.num_batches < 1) {
    return corrupt("batch_size and num_batches must be at least 1");
  }
  const auto split = file->metadata.find("split");
  const auto schema = file->metadata.find("schema");
  if (split == file->metadata.end()) return corrupt("metadata 'split' missing");
  if (schema == file->metadata.end())
    return corrupt("metadata 'schema' missing");
  info.split = split->second;
  const Json schema_json = Json::parse(schema->second, nullptr, false);
  absl::StatusOr<std::vector<FieldSpec>> fields =
      ParseSchema(schema_json, "batch file metadata");
  if (!fields.ok()) return corrupt(std::string(fields.status().message()));
  info.schema = *std::move(fields);
  const std::vector<TensorSpec> expected = BatchFileTensors(info);
  if (expected.size() != file->tensors.size()) {
    return corrupt("tensors do not match the schema");
  }
  for (const TensorSpec& want : expected) {
    const SafetensorsTensor* found = nullptr;
    for (const SafetensorsTensor& tensor : file->tensors) {
      if (tensor.spec.name == want.name) found = &tensor;
    }
    if (found == nullptr || found->spec.dtype != want.dtype ||
        found->spec.shape != want.shape) {
      return corrupt(absl::StrCat("tensor '", want.name,
                                  "' missing or of another dtype or shape"));
    }
    layout.fields.push_back(*found);
  }
  return layout;
}

}  // namespace sluice
