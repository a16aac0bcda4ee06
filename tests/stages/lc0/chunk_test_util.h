// Helpers for the chunk-feed tests: temporary directories, tiny tar and
// gzip files written by hand (so every kind of damage can be made), config
// parsing and waiting on conditions with a deadline.
#ifndef SLUICE_TESTS_STAGES_LC0_CHUNK_TEST_UTIL_H_
#define SLUICE_TESTS_STAGES_LC0_CHUNK_TEST_UTIL_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/data_loader.h"
#include "proto/data_loader_config.pb.h"
#include "stages/lc0/chunk.h"

namespace sluice::lc0::testing {

// A fresh directory (mkdtemp) removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string operator/(const std::string& name) const;

 private:
  std::string path_;
};

// Distinct bytes that start with the gzip magic (the pool checks only the
// magic; nothing here is decompressed).
std::string FakeGzip(const std::string& tag);

// A ustar archive of `members` (name, data), with the two zero end blocks.
std::string TarBytes(
    const std::vector<std::pair<std::string, std::string>>& members);
// TarBytes of `count` members "training.<first + i>.gz" of FakeGzip data.
std::string ChunkTar(int count, int first = 0);

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

// The next chunk of output `alias`, or nullopt at end of stream / timeout
// (a timeout also fails the test).
std::optional<Chunk> NextChunk(
    DataLoader& loader, const std::string& alias = "",
    std::chrono::seconds timeout = std::chrono::seconds(60));

// Opens and indexes `path` synchronously (for tests of the bookkeeping).
std::shared_ptr<ChunkSource> OpenIndexed(const std::string& path);

}  // namespace sluice::lc0::testing

#endif  // SLUICE_TESTS_STAGES_LC0_CHUNK_TEST_UTIL_H_
