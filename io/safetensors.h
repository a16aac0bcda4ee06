// Safetensors: the file format of batch files (huggingface/safetensors): an
// 8-byte little-endian header length N, N bytes of JSON header, then the
// tensors' bytes. The header maps each tensor name to its dtype, shape and
// [begin, end) offsets into the data section, plus an optional
// "__metadata__" map of string to string.
//
//   SLUICE_ASSIGN_OR_RETURN(std::string header,
//                           EncodeSafetensorsHeader(specs, metadata));
//   // write `header`, then each spec's bytes in order.
//   SLUICE_ASSIGN_OR_RETURN(SafetensorsFile file,
//                           ParseSafetensors(bytes, bytes.size()));
//   std::string_view data = bytes.substr(file.tensors[0].offset,
//                                        file.tensors[0].bytes);
#ifndef SLUICE_IO_SAFETENSORS_H_
#define SLUICE_IO_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {

// Largest header ParseSafetensors accepts by default (the reference
// implementation's limit is 100 MB; ours is smaller on purpose).
inline constexpr size_t kMaxSafetensorsHeaderBytes = 16 << 20;

// Bytes per element of a safetensors dtype ("F32", "I64", ...), or 0 for an
// unknown dtype.
size_t SafetensorsDtypeSize(std::string_view dtype);

// A tensor's name, dtype and full shape.
struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;

  // Product of the shape times the dtype size (the dtype must be known).
  uint64_t ByteSize() const;
};

// A tensor located in a parsed file: `offset` counts from the start of the
// file, `bytes` is its length.
struct SafetensorsTensor {
  TensorSpec spec;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// A parsed header: tensors in data order, and the metadata map.
struct SafetensorsFile {
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
};

// The header for `tensors` laid out back to back in the given order, padded
// with spaces to a multiple of 8 bytes (so the data is 8-byte aligned).
// InvalidArgument for an unknown dtype, a negative dimension, a duplicate
// or empty name, or the reserved name "__metadata__".
absl::StatusOr<std::string> EncodeSafetensorsHeader(
    const std::vector<TensorSpec>& tensors,
    const std::map<std::string, std::string>& metadata);

// Bytes of the file's start that ParseSafetensors needs: 8 plus the header
// length read from `head` (which must hold at least 8 bytes).
uint64_t SafetensorsPrefixBytes(std::string_view head);

// Parses and validates the header of a file of `file_size` bytes whose
// start is `head` (at least SafetensorsPrefixBytes, or the whole file):
// header length within `max_header_bytes` and the file, JSON well formed,
// every dtype known, shapes non-negative, offsets consistent with shape and
// dtype, tensors covering the data section exactly (so a truncated file
// fails), metadata values strings. DataLoss naming the problem otherwise.
absl::StatusOr<SafetensorsFile> ParseSafetensors(
    std::string_view head, uint64_t file_size,
    size_t max_header_bytes = kMaxSafetensorsHeaderBytes);

}  // namespace sluice

#endif  // SLUICE_IO_SAFETENSORS_H_
