#include "engine/config_text.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace sluice {
namespace {

// Keeps the first parse error as "line L, column C: message".
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (error.empty()) {
      error = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ",
                           message);
    }
  }
  std::string error;
};

}  // namespace

absl::StatusOr<DataLoaderConfig> ParseConfigText(std::string_view text,
                                                 std::string_view where) {
  if (text.size() > kMaxConfigTextBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(where), " is larger than the limit of ",
                     kMaxConfigTextBytes, " bytes"));
  }
  DataLoaderConfig config;
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &config)) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(where), ": ", errors.error));
  }
  return config;
}

absl::StatusOr<DataLoaderConfig> ReadConfigFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(absl::StrCat("cannot read config '", path, "'"));
  }
  std::string text;
  char block[1 << 16];
  while (text.size() <= kMaxConfigTextBytes &&
         (file.read(block, sizeof block) || file.gcount() > 0)) {
    text.append(block, static_cast<size_t>(file.gcount()));
  }
  return ParseConfigText(text, absl::StrCat("config '", path, "'"));
}

}  // namespace sluice
