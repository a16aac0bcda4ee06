// The metadata of a batch-file queue (docs: stages/batch_queue/README.md):
// the dataset's strict `meta.json` at the queue root, and the per-file
// metadata stored in each safetensors batch file's "__metadata__".
//
//   SLUICE_ASSIGN_OR_RETURN(DatasetMeta meta, ReadDatasetMeta(root));
//   SLUICE_RETURN_IF_ERROR(CheckSameSchema(meta.batch_schema, file_schema));
//
// Strict: a missing key, a key of the wrong JSON type or an unknown enum
// value is an InvalidArgument naming the key; there are no defaults.
#ifndef SLUICE_IO_BATCH_FILE_META_H_
#define SLUICE_IO_BATCH_FILE_META_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/safetensors.h"

namespace sluice {

// One field of a batch: its tensor name, safetensors dtype, shape of one
// sample (without the batch axis) and role ("input", "target", "mask"...).
struct FieldSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string role;

  bool operator==(const FieldSpec&) const = default;
};

// meta.json. Required: dataset_name, training_type (one of LM, MLM,
// CLASSIFICATION, TOKEN_CLASSIFICATION, SEQUENCE_SCORING, LC0), batch_size
// (>= 1), batch_schema (non-empty list of FieldSpec objects), split_info (a
// JSON object, kept as text). Optional task fields: vocab_size, block_size,
// target_size (>= 1 when present). Other keys are allowed and ignored.
struct DatasetMeta {
  std::string dataset_name;
  std::string training_type;
  int64_t batch_size = 0;
  std::vector<FieldSpec> batch_schema;
  std::string split_info_json = "{}";
  std::optional<int64_t> vocab_size;
  std::optional<int64_t> block_size;
  std::optional<int64_t> target_size;
};

// Parses and validates meta.json text.
absl::StatusOr<DatasetMeta> ParseDatasetMeta(std::string_view json);
// meta.json text for `meta` (validated the same way as on parsing).
absl::StatusOr<std::string> SerializeDatasetMeta(const DatasetMeta& meta);
// `root`/meta.json, parsed; NotFound when it is missing.
absl::StatusOr<DatasetMeta> ReadDatasetMeta(const std::string& root);
// Writes `root`/meta.json atomically.
absl::Status WriteDatasetMeta(const std::string& root, const DatasetMeta& meta);

// OK when `actual` equals `expected`; else InvalidArgument naming the first
// differing field and attribute, prefixed with `context`.
absl::Status CheckSameSchema(const std::vector<FieldSpec>& expected,
                             const std::vector<FieldSpec>& actual,
                             std::string_view context);

// The metadata of one batch file.
struct BatchFileInfo {
  int64_t batch_size = 0;
  int64_t num_batches = 0;
  int64_t sequence = 0;
  std::string split;
  int64_t produced_at_ms = 0;  // UTC milliseconds since the epoch
  std::vector<FieldSpec> schema;
};

// The safetensors tensors of a batch file: one per schema field, shaped
// [num_batches * batch_size] + field shape, in schema order.
std::vector<TensorSpec> BatchFileTensors(const BatchFileInfo& info);

// The header of a batch file (see EncodeSafetensorsHeader); the caller then
// writes each field's data for all batches, field after field.
absl::StatusOr<std::string> EncodeBatchFileHeader(const BatchFileInfo& info);

// A parsed batch file: its info and, for each schema field in order, where
// its data lies in the file.
struct BatchFileLayout {
  BatchFileInfo info;
  std::vector<SafetensorsTensor> fields;
};

// Parses a batch file of `file_size` bytes from its start `head` (see
// ParseSafetensors): a valid safetensors file whose metadata holds the
// batch-file keys and whose tensors are exactly the schema's, with
// consistent dtypes and shapes. DataLoss naming the problem otherwise.
absl::StatusOr<BatchFileLayout> ParseBatchFile(std::string_view head,
                                               uint64_t file_size);

}  // namespace sluice

#endif  // SLUICE_IO_BATCH_FILE_META_H_
