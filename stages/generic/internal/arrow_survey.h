// arrow_source's survey: what each file of the data set holds before any
// row is read. A file's format is told by its magic (ARROW1: file format,
// else stream), its row count read from the record batches' metadata
// alone (file format: the footer's blocks, 64 batches' metadata at once;
// stream format: message by message, bodies skipped), and, for a file read
// in row blocks, where those columns lie in each record batch.
//
//   std::vector<absl::StatusOr<ArrowFileSurvey>> surveys =
//       co_await SurveyArrowFiles(reader, paths, block_columns);
#ifndef SLUICE_STAGES_GENERIC_INTERNAL_ARROW_SURVEY_H_
#define SLUICE_STAGES_GENERIC_INTERNAL_ARROW_SURVEY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asio/awaitable.hpp"
#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/file_version.h"
#include "io/arrow/schema.h"
#include "io/async_file_reader.h"
#include "proto/data_loader_config.pb.h"
#include "stages/generic/internal/arrow_dataset.h"

namespace sluice {

// What the survey learns of one file.
struct ArrowFileSurvey {
  bool stream = false;
  io::arrow::Schema schema;
  int64_t rows = 0;
  // File format: the layout of the columns read in blocks (if any, and
  // none of them has a null), for the version surveyed.
  std::optional<io::arrow::ArrowFileReader::ColumnLayout> layout;
  io::arrow::FileVersion version;
};

// The top-level columns a file of `schema` is read by in blocks
// (ArrowFileReader::LocateColumns); none when it is not read in blocks.
using BlockColumnsFunction = std::function<std::vector<int>(
    const io::arrow::Schema& schema, const std::string& path)>;

// Surveys each of `paths`, up to 8 files at once (their reads overlap),
// and returns the surveys in the order of `paths`. A file that cannot be
// surveyed gets an error whose code ArrowFileSkipReason maps to a skip
// reason. `paths` and `block_columns` must outlive the await.
asio::awaitable<std::vector<absl::StatusOr<ArrowFileSurvey>>> SurveyArrowFiles(
    io::AsyncFileReader& reader, const std::vector<std::string>& paths,
    const BlockColumnsFunction& block_columns);

// Called for each file left out of the data set: the skip reason and a
// message naming the file.
using FileSkipFunction =
    std::function<void(std::string_view reason, const std::string& message)>;

// The data set of `paths` (sorted, each once) from their `surveys`: each
// surveyed file whose columns plan (PlanColumns of `config`) gets the next
// number and, as offset, the rows of the files before it. The others are
// reported to `skip` (the survey's error, missing_column,
// unsupported_column_type) and left out.
ArrowDataset DatasetOfSurveys(
    std::vector<std::string> paths,
    std::vector<absl::StatusOr<ArrowFileSurvey>> surveys,
    const ArrowSourceConfig& config, const FileSkipFunction& skip);

// Whether `path` names an Arrow IPC file: `*.arrow`, `*.feather` or
// `*.ipc`.
bool HasArrowFileExtension(std::string_view path);

// The skip reason of a file-level failure (survey or read): file_missing,
// permission_denied, not_arrow (InvalidArgument: no magic and no readable
// stream), damaged_file, unsupported_feature, limit_exceeded, read_error.
std::string_view ArrowFileSkipReason(const absl::Status& error);

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_INTERNAL_ARROW_SURVEY_H_
