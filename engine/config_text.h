// Text-format DataLoaderConfigs: parsing with errors that name the line and
// column, and reading config files under a size limit (a config is user
// input: a huge or hostile file is rejected, not parsed).
//
//   SLUICE_ASSIGN_OR_RETURN(DataLoaderConfig config,
//                           ReadConfigFile("train.textproto"));
#ifndef SLUICE_ENGINE_CONFIG_TEXT_H_
#define SLUICE_ENGINE_CONFIG_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "proto/data_loader_config.pb.h"

namespace sluice {

// Largest text-format config accepted.
inline constexpr size_t kMaxConfigTextBytes = size_t{16} << 20;

// Parses `text`; InvalidArgument "WHERE: line L, column C: ..." on a parse
// error or when the text is larger than kMaxConfigTextBytes.
absl::StatusOr<DataLoaderConfig> ParseConfigText(std::string_view text,
                                                 std::string_view where);

// Reads and parses the file at `path` (reading stops just past the size
// limit); NotFound when it cannot be read, InvalidArgument as above.
absl::StatusOr<DataLoaderConfig> ReadConfigFile(const std::string& path);

}  // namespace sluice

#endif  // SLUICE_ENGINE_CONFIG_TEXT_H_
