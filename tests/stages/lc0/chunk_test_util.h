// Helpers for the chunk-feed tests: tiny tar and gzip files written by hand
// (so every kind of damage can be made), and the pipeline helpers of
// tests/testing/pipeline_test_util.h under this namespace too.
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
#include "tests/testing/pipeline_test_util.h"

namespace sluice::lc0::testing {

using sluice::testing::ParseConfig;
using sluice::testing::StageTotals;
using sluice::testing::TempDir;
using sluice::testing::WaitUntil;
using sluice::testing::WriteFile;
using sluice::testing::WriteFileAtomically;

// Distinct bytes that start with the gzip magic (the pool checks only the
// magic; nothing here is decompressed).
std::string FakeGzip(const std::string& tag);

// A ustar archive of `members` (name, data), with the two zero end blocks.
std::string TarBytes(
    const std::vector<std::pair<std::string, std::string>>& members);
// TarBytes of `count` members "training.<first + i>.gz" of FakeGzip data.
std::string ChunkTar(int count, int first = 0);

// The next chunk of output `alias`, or nullopt at end of stream / timeout
// (a timeout also fails the test).
std::optional<Chunk> NextChunk(
    DataLoader& loader, const std::string& alias = "",
    std::chrono::seconds timeout = std::chrono::seconds(60));

// Opens and indexes `path` synchronously (for tests of the bookkeeping).
std::shared_ptr<ChunkSource> OpenIndexed(const std::string& path);

}  // namespace sluice::lc0::testing

#endif  // SLUICE_TESTS_STAGES_LC0_CHUNK_TEST_UTIL_H_
