#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace sluice {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";

absl::Status Corrupt(std::string_view problem) {
  return absl::DataLossError(
      absl::StrCat("safetensors: ", std::string(problem)));
}

// Product of `shape` times `element_size`, or nullopt on overflow.
std::optional<uint64_t> ByteSizeOf(const std::vector<int64_t>& shape,
                                   uint64_t element_size) {
  uint64_t total = element_size;
  for (int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    const auto d = static_cast<uint64_t>(dim);
    if (d != 0 && total > std::numeric_limits<uint64_t>::max() / d) {
      return std::nullopt;
    }
    total *= d;
  }
  return total;
}

}  // namespace

size_t SafetensorsDtypeSize(std::string_view dtype) {
  static const std::map<std::string_view, size_t> kSizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F16", 2}, {"BF16", 2},
      {"I16", 2},  {"U16", 2}, {"F32", 4}, {"I32", 4}, {"U32", 4},
      {"F64", 8},  {"I64", 8}, {"U64", 8}};
  auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

uint64_t TensorSpec::ByteSize() const {
  return ByteSizeOf(shape, SafetensorsDtypeSize(dtype)).value_or(0);
}

absl::StatusOr<std::string> EncodeSafetensorsHeader(
    const std::vector<TensorSpec>& tensors,
    const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header[std::string(kMetadataKey)] = metadata;
  uint64_t offset = 0;
  for (const TensorSpec& tensor : tensors) {
    if (tensor.name.empty() || tensor.name == kMetadataKey ||
        header.contains(tensor.name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "safetensors: empty, reserved or duplicate tensor name '",
          tensor.name, "'"));
    }
    const size_t element = SafetensorsDtypeSize(tensor.dtype);
    if (element == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("safetensors: tensor '", tensor.name,
                       "' has unknown dtype '", tensor.dtype, "'"));
    }
    const std::optional<uint64_t> bytes = ByteSizeOf(tensor.shape, element);
    if (!bytes.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "safetensors: tensor '", tensor.name, "' has a bad shape"));
    }
    header[tensor.name] = {{"dtype", tensor.dtype},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + *bytes}}};
    offset += *bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t length = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(length >> (8 * i));
  out += json;
  return out;
}

uint64_t SafetensorsPrefixBytes(std::string_view head) {
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) {
    length |= static_cast<uint64_t>(static_cast<unsigned char>(head[i]))
              << (8 * i);
  }
  return length > std::numeric_limits<uint64_t>::max() - 8 ? length
                                                           : length + 8;
}

absl::StatusOr<SafetensorsFile> ParseSafetensors(std::string_view bytes,
                                                 uint64_t file_size,
                                                 size_t max_header_bytes) {
  if (file_size < 8 || bytes.size() < 8) {
    return Corrupt("file shorter than 8 bytes");
  }
  const uint64_t length = SafetensorsPrefixBytes(bytes) - 8;
  if (length > max_header_bytes) {
    return Corrupt(absl::StrCat("header of ", length, " bytes exceeds the ",
                                max_header_bytes, "-byte limit"));
  }
  if (length > file_size - 8) {
    return Corrupt(absl::StrCat("header of ", length,
                                " bytes runs past the end of the file"));
  }
  if (length > bytes.size() - 8) {
    return absl::InvalidArgumentError(
        "safetensors: the header is not all in the bytes given");
  }
  const Json header = Json::parse(bytes.substr(8, length), nullptr,
                                  /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    return Corrupt("header is not a JSON object");
  }
  const uint64_t data_start = 8 + length;
  const uint64_t data_bytes = file_size - data_start;
  SafetensorsFile file;
  for (const auto& [name, value] : header.items()) {
    if (name == kMetadataKey) {
      if (!value.is_object()) return Corrupt("__metadata__ is not an object");
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) {
          return Corrupt(absl::StrCat("metadata '", key, "' is not a string"));
        }
        file.metadata[key] = text.get<std::string>();
      }
      continue;
    }
    // A named copy: clang 14 cannot capture a structured binding.
    const std::string tensor_name = name;
    const auto bad = [&](std::string_view what) {
      return Corrupt(
          absl::StrCat("tensor '", tensor_name, "': ", std::string(what)));
    };
    if (!value.is_object()) return bad("entry is not an object");
    const auto dtype = value.find("dtype");
    const auto shape = value.find("shape");
    const auto offsets = value.find("data_offsets");
    if (dtype == value.end() || !dtype->is_string()) return bad("no dtype");
    if (shape == value.end() || !shape->is_array()) return bad("no shape");
    if (offsets == value.end() || !offsets->is_array() ||
        offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned()) {
      return bad("no data_offsets [begin, end]");
    }
    SafetensorsTensor tensor;
    tensor.spec.name = name;
    tensor.spec.dtype = dtype->get<std::string>();
    const size_t element = SafetensorsDtypeSize(tensor.spec.dtype);
    if (element == 0) {
      return bad(absl::StrCat("unknown dtype '", tensor.spec.dtype, "'"));
    }
    for (const Json& dim : *shape) {
      if (!dim.is_number_unsigned()) return bad("shape has a bad dimension");
      tensor.spec.shape.push_back(dim.get<int64_t>());
    }
    const auto begin = (*offsets)[0].get<uint64_t>();
    const auto end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > data_bytes) {
      return bad("data_offsets out of the data section");
    }
    const std::optional<uint64_t> expected =
        ByteSizeOf(tensor.spec.shape, element);
    if (!expected.has_value() || *expected != end - begin) {
      return bad("data_offsets do not match shape and dtype");
    }
    tensor.offset = data_start + begin;
    tensor.bytes = end - begin;
    file.tensors.push_back(std::move(tensor));
  }
  std::sort(file.tensors.begin(), file.tensors.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
              return a.offset < b.offset;
            });
  uint64_t expected_offset = data_start;
  for (const SafetensorsTensor& tensor : file.tensors) {
    if (tensor.offset != expected_offset) {
      return Corrupt(absl::StrCat("tensor '", tensor.spec.name,
                                  "' overlaps another or leaves a gap"));
    }
    expected_offset += tensor.bytes;
  }
  if (expected_offset != file_size) {
    return Corrupt(absl::StrCat("data section has ", data_bytes,
                                " bytes but the tensors cover ",
                                expected_offset - data_start));
  }
  return file;
}

}  // namespace sluice
