// The data sets and checks arrow_source's tests share: Arrow files whose
// row i (its global index) holds label 10 i, a blob of BlobSize(i) bytes of
// value i & 255 and vec [i, i + 0.5, i + 1, i + 1.5], the pipelines that
// read them and the checks of what comes out.
#ifndef SLUICE_TESTS_STAGES_GENERIC_ARROW_SOURCE_TEST_DATA_H_
#define SLUICE_TESTS_STAGES_GENERIC_ARROW_SOURCE_TEST_DATA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "stages/generic/example.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice::arrow_source_testing {

// The blob's size and the vec's values of row `i`.
int64_t BlobSize(int64_t i);
float VecValue(int64_t i, int k);

// Rows of a file written with a null value.
struct Nulls {
  int64_t blob_row = -1;   // file row whose blob is null
  int64_t label_row = -1;  // file row whose label is null
};

// Writes rows [first, first + rows) of the formula in batches of
// `batch_rows`, the columns called `names` (blob, vec, label).
void WriteArrowFile(const std::string& path, int64_t first, int64_t rows,
                    int64_t batch_rows, Nulls nulls = {},
                    std::vector<std::string> names = {"blob", "vec", "label"});

// Four files of 5, 7, 1 and 6 rows (19 in all), named so that the sorted
// order is the index order (WriteDataset).
inline constexpr int64_t kRows[] = {5, 7, 1, 6};
inline constexpr int64_t kTotalRows = 19;
void WriteDataset(const testing::TempDir& dir);

// A file_path_provider over `dir` and an arrow_source 'rows' in `mode`
// mapping blob, vec and label (as field y), with `extra` in its config.
std::string RowsConfig(const std::string& dir, const std::string& mode,
                       uint64_t seed = 0, bool io_uring = true,
                       const std::string& extra = "");

// The next example of the loader's output, waiting up to a minute (a
// timeout fails the test).
std::optional<Example> NextExample(DataLoader& loader);

// The int64 scalar field `name` of `example` (-1, failing, when missing).
int64_t Int64(const Example& example, const std::string& name);

// Checks every mapped value of `example` against the formula.
void ExpectRowValues(const Example& example);

// Every example of an EVAL run until the output ends, each checked against
// the formula and its seed 0; their indexes in arrival order.
std::vector<int64_t> EvalIndexes(DataLoader& loader);

// 0, 1, ..., count - 1.
std::vector<int64_t> IndexesUpTo(int64_t count);

// The count of skip `reason` in `metrics` (0 when none).
uint64_t Skips(const StageMetricProto& metrics, const std::string& reason);

}  // namespace sluice::arrow_source_testing

#endif  // SLUICE_TESTS_STAGES_GENERIC_ARROW_SOURCE_TEST_DATA_H_
