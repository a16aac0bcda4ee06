#include "tests/stages/lc0/chunk_test_util.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "asio/io_context.hpp"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "io/async_file_reader.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice::lc0::testing {

std::string FakeGzip(const std::string& tag) {
  return std::string("\x1f\x8b\x08\x00", 4) + "chunk:" + tag;
}

std::string TarBytes(
    const std::vector<std::pair<std::string, std::string>>& members) {
  std::string tar;
  for (const auto& [name, data] : members) {
    char header[512] = {};
    std::snprintf(header, 100, "%s", name.c_str());
    std::snprintf(header + 100, 8, "0000644");
    std::snprintf(header + 108, 8, "0000000");
    std::snprintf(header + 116, 8, "0000000");
    std::snprintf(header + 124, 12, "%011o",
                  static_cast<unsigned>(data.size()));
    std::snprintf(header + 136, 12, "%011o", 0u);
    std::memset(header + 148, ' ', 8);
    header[156] = '0';
    std::memcpy(header + 257,
                "ustar\0"
                "00",
                8);
    unsigned sum = 0;
    for (unsigned char c : header) sum += c;
    std::snprintf(header + 148, 8, "%06o", sum);
    header[155] = ' ';
    tar.append(header, 512);
    tar += data;
    tar.append((512 - data.size() % 512) % 512, '\0');
  }
  tar.append(1024, '\0');
  return tar;
}

std::string ChunkTar(int count, int first) {
  std::vector<std::pair<std::string, std::string>> members;
  for (int i = 0; i < count; ++i) {
    const std::string id = std::to_string(first + i);
    members.emplace_back("training." + id + ".gz", FakeGzip(id));
  }
  return TarBytes(members);
}

std::optional<Chunk> NextChunk(DataLoader& loader, const std::string& alias,
                               std::chrono::seconds timeout) {
  auto result = loader.GetNextFor<Chunk>(alias, timeout);
  EXPECT_NE(result.kind, Channel<Chunk>::GetResult::Kind::kTimeout);
  return std::move(result.item);
}

std::shared_ptr<ChunkSource> OpenIndexed(const std::string& path) {
  absl::StatusOr<std::shared_ptr<ChunkSource>> source = ChunkSource::Open(path);
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return nullptr;
  asio::io_context io;
  io::AsyncFileReader reader(io, {.use_io_uring = false});
  sluice::testing::CoroutineRunner runner(io);
  std::shared_ptr<ChunkSource> indexed = *source;
  runner.Spawn([indexed, &reader]() -> asio::awaitable<void> {
    absl::Status status = co_await indexed->Index(reader);
    EXPECT_TRUE(status.ok()) << status;
  });
  runner.RunToCompletion();
  return indexed;
}

}  // namespace sluice::lc0::testing
