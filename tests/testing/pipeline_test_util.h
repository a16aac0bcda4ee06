// Helpers for tests that run pipelines on files they write: temporary
// directories, file writes (in place or by rename), config parsing, waiting
// on a condition with a deadline, and a stage's total metrics.
#ifndef SLUICE_TESTS_TESTING_PIPELINE_TEST_UTIL_H_
#define SLUICE_TESTS_TESTING_PIPELINE_TEST_UTIL_H_

#include <chrono>
#include <functional>
#include <string>

#include "engine/data_loader.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice::testing {

// A fresh directory (mkdtemp) under `parent` (empty: the system's temp
// directory), removed with its contents on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& parent = "");
  ~TempDir();
  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string operator/(const std::string& name) const;

 private:
  std::string path_;
};

// "/dev/shm" when it is a tmpfs (a file system that keeps files in memory
// and refuses O_DIRECT), else empty.
std::string TmpfsDirectory();

// Writes `bytes` to `path` in place (no rename).
void WriteFile(const std::string& path, const std::string& bytes);
// Writes `bytes` under a hidden name beside `path`, then renames it.
void WriteFileAtomically(const std::string& path, const std::string& bytes);

// Parses a text-format DataLoaderConfig (fails the test on error).
DataLoaderConfig ParseConfig(const std::string& text);

// Polls `condition` until true or `timeout` passes; true if it held.
bool WaitUntil(const std::function<bool()>& condition,
               std::chrono::seconds timeout = std::chrono::seconds(60));

// The total metrics of stage `name` in the latest snapshot (empty if none).
StageMetricProto StageTotals(DataLoader& loader, const std::string& name);

// The items every stage skipped for `reason`, in total.
uint64_t SkipsCounted(const DataLoaderMetricsProto& metrics,
                      const std::string& reason);

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_TESTING_PIPELINE_TEST_UTIL_H_
