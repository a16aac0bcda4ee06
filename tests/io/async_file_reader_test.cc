#include "io/async_file_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "asio/bind_cancellation_slot.hpp"
#include "asio/cancellation_signal.hpp"
#include "asio/co_spawn.hpp"
#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "io/aligned_buffer.h"
#include "tests/io/temp_file.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice::io {
namespace {

using ::sluice::testing::CoroutineRunner;

// Parameters: io_uring (else the pread threads), and whether reads of the
// page cache are copied inline (else every read goes to the backend).
class AsyncFileReaderTest
    : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  bool io_uring() const { return std::get<0>(GetParam()); }
  AsyncFileReader::Options Options(unsigned queue_depth = 128,
                                   unsigned rings = 0) const {
    return {.use_io_uring = io_uring(),
            .queue_depth = queue_depth,
            .rings = rings,
            .cached_reads_inline = std::get<1>(GetParam())};
  }
};

asio::awaitable<void> ReadBlock(AsyncFileReader& reader, const TempFile& file,
                                size_t offset, size_t length,
                                std::string& out) {
  out.resize(length);
  absl::StatusOr<size_t> got = co_await reader.ReadFullyAt(
      file.fd(), offset, std::as_writable_bytes(std::span(out)));
  EXPECT_TRUE(got.ok()) << got.status();
  if (got.ok()) out.resize(*got);
}

TEST_P(AsyncFileReaderTest, ManyConcurrentReadsReturnTheRightBytes) {
  const TempFile file(1 << 20);
  asio::io_context io;
  AsyncFileReader reader(io, Options(/*queue_depth=*/8));
  CoroutineRunner runner(io);
  constexpr size_t kBlock = 16 * 1024;
  std::vector<std::string> blocks(file.content().size() / kBlock);
  for (size_t i = 0; i < blocks.size(); ++i) {
    runner.Spawn(ReadBlock(reader, file, i * kBlock, kBlock, blocks[i]));
  }
  runner.RunToCompletion(/*threads=*/2);
  for (size_t i = 0; i < blocks.size(); ++i) {
    ASSERT_EQ(blocks[i], file.content().substr(i * kBlock, kBlock)) << i;
  }
}

// Cold: every page evicted, so each read waits for the disk and completes
// through the reaper (io_uring) or a pool thread. A ring of depth 2 keeps
// most reads waiting their turn.
TEST_P(AsyncFileReaderTest, ColdReadsBeyondTheRingDepthWaitTheirTurn) {
  const TempFile file(2 << 20);
  file.Evict();
  asio::io_context io;
  AsyncFileReader reader(io, Options(/*queue_depth=*/2, /*rings=*/1));
  CoroutineRunner runner(io);
  constexpr size_t kBlock = 64 * 1024;
  std::vector<std::string> blocks(file.content().size() / kBlock);
  for (size_t i = 0; i < blocks.size(); ++i) {
    runner.Spawn(ReadBlock(reader, file, i * kBlock, kBlock, blocks[i]));
  }
  runner.RunToCompletion(/*threads=*/2);
  for (size_t i = 0; i < blocks.size(); ++i) {
    ASSERT_EQ(blocks[i], file.content().substr(i * kBlock, kBlock)) << i;
  }
  EXPECT_GT(reader.counts().backend_reads, 0u);
}

TEST_P(AsyncFileReaderTest, BatchResumesOnceWithEveryResult) {
  const TempFile file(1 << 20);
  asio::io_context io;
  // More reads than the rings hold: the rest wait their turn.
  AsyncFileReader reader(io, Options(/*queue_depth=*/4, /*rings=*/2));
  CoroutineRunner runner(io);
  constexpr size_t kBlock = 16 * 1024;
  std::vector<std::string> blocks(20, std::string(kBlock, '\0'));
  std::vector<AsyncFileReader::ReadRequest> requests;
  for (size_t i = 0; i < blocks.size(); ++i) {
    requests.push_back({file.fd(), i * 3 * kBlock,
                        std::as_writable_bytes(std::span(blocks[i]))});
  }
  requests[5].fd = -1;                              // an error
  requests[7].offset = file.content().size() - 10;  // a short read
  std::vector<absl::StatusOr<size_t>> got;
  runner.Spawn([&]() -> asio::awaitable<void> {
    got = co_await reader.ReadBatchAt(requests);
  });
  runner.RunToCompletion(/*threads=*/2);
  ASSERT_EQ(got.size(), blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i == 5) {
      EXPECT_FALSE(got[i].ok());
      continue;
    }
    ASSERT_TRUE(got[i].ok()) << i << ": " << got[i].status();
    const size_t want = i == 7 ? 10 : kBlock;
    ASSERT_EQ(*got[i], want) << i;
    EXPECT_EQ(blocks[i].substr(0, want),
              file.content().substr(requests[i].offset, want))
        << i;
  }
}

// Records what a ReadObserver is told.
class RecordingObserver final : public AsyncFileReader::ReadObserver {
 public:
  void OnReads(std::chrono::steady_clock::time_point begin,
               std::chrono::steady_clock::time_point end, size_t reads,
               uint64_t bytes, size_t from_page_cache) override {
    std::lock_guard lock(mu);
    EXPECT_LE(begin, end);
    ++calls;
    this->reads += reads;
    this->bytes += bytes;
    cached += from_page_cache;
  }
  std::mutex mu;
  int calls = 0;
  size_t reads = 0;
  uint64_t bytes = 0;
  size_t cached = 0;
};

TEST_P(AsyncFileReaderTest, AnObserverIsToldOfEveryBatchOnceDone) {
  const TempFile file(1 << 20);
  asio::io_context io;
  AsyncFileReader reader(io, Options());
  RecordingObserver observer;
  reader.SetObserver(&observer);
  CoroutineRunner runner(io);
  constexpr size_t kBlock = 64 * 1024;
  std::vector<std::string> blocks(4, std::string(kBlock, '\0'));
  std::vector<AsyncFileReader::ReadRequest> requests;
  for (size_t i = 0; i < blocks.size(); ++i) {
    requests.push_back(
        {file.fd(), i * kBlock, std::as_writable_bytes(std::span(blocks[i]))});
  }
  requests[3].offset = file.content().size() - 100;  // a short read
  std::string single;
  runner.Spawn([&]() -> asio::awaitable<void> {
    co_await reader.ReadBatchAt(requests);
  });
  runner.Spawn(ReadBlock(reader, file, 0, 1000, single));
  runner.RunToCompletion(/*threads=*/2);
  reader.SetObserver(nullptr);
  EXPECT_EQ(observer.calls, 2);
  EXPECT_EQ(observer.reads, 5);
  EXPECT_EQ(observer.bytes, 3 * kBlock + 100 + 1000);
  EXPECT_LE(observer.cached, 5);
  // Removed: told of nothing more.
  io.restart();
  runner.Spawn(ReadBlock(reader, file, 0, 1000, single));
  runner.RunToCompletion(/*threads=*/1);
  EXPECT_EQ(observer.calls, 2);
}

TEST_P(AsyncFileReaderTest, ReadsPastEndOfFileAreShort) {
  const TempFile file(1000);
  asio::io_context io;
  AsyncFileReader reader(io, Options());
  CoroutineRunner runner(io);
  std::string tail;
  std::string beyond;
  runner.Spawn(ReadBlock(reader, file, 900, 500, tail));
  runner.Spawn(ReadBlock(reader, file, 5000, 10, beyond));
  runner.RunToCompletion();
  EXPECT_EQ(tail, file.content().substr(900));
  EXPECT_TRUE(beyond.empty());
}

TEST_P(AsyncFileReaderTest, BadDescriptorIsAnErrorStatus) {
  asio::io_context io;
  AsyncFileReader reader(io, Options());
  CoroutineRunner runner(io);
  absl::Status status;
  runner.Spawn([&]() -> asio::awaitable<void> {
    std::byte buffer[16];
    absl::StatusOr<size_t> got = co_await reader.ReadAt(-1, 0, buffer);
    status = got.status();
  });
  runner.RunToCompletion();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("Bad file descriptor"),
            std::string::npos)
      << status;
}

TEST_P(AsyncFileReaderTest, ReportsItsBackend) {
  asio::io_context io;
  AsyncFileReader reader(io, Options());
  if (io_uring() && !reader.uses_io_uring()) {
    // The kernel or sandbox forbids io_uring: the fallback must say why.
    EXPECT_FALSE(reader.fallback_reason().empty());
    EXPECT_EQ(reader.backend_name(), "pread-threads");
    return;
  }
  EXPECT_EQ(reader.backend_name(), io_uring() ? "io_uring" : "pread-threads");
  EXPECT_EQ(reader.features().empty(), !io_uring());
}

// Registered buffers and files are an io_uring feature: reads through them
// equal plain reads byte for byte, warm and cold; elsewhere registration
// fails and plain reads go on.
TEST_P(AsyncFileReaderTest, RegisteredBufferReadsEqualPlainReads) {
  const TempFile file((1 << 20) + 777);
  asio::io_context io;
  AsyncFileReader reader(io, Options());
  AlignedBuffer region(256 << 10);
  absl::StatusOr<AsyncFileReader::Registration> buffer =
      reader.RegisterBuffer(region.span());
  absl::StatusOr<AsyncFileReader::Registration> registered_file =
      reader.RegisterFile(file.fd());
  if (!reader.uses_io_uring()) {
    EXPECT_FALSE(buffer.ok());
    EXPECT_FALSE(registered_file.ok());
  } else {
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    ASSERT_TRUE(registered_file.ok()) << registered_file.status();
  }
  for (const bool cold : {false, true}) {
    SCOPED_TRACE(cold ? "cold" : "warm");
    if (cold) file.Evict();
    std::string read;
    io.restart();
    CoroutineRunner runner(io);
    runner.Spawn([&]() -> asio::awaitable<void> {
      // Four slices of the region per round, at odd places in it.
      constexpr size_t kSlice = 60000;
      for (size_t offset = 0; offset < file.content().size();) {
        std::vector<AsyncFileReader::ReadRequest> requests;
        for (size_t k = 0; k < 4; ++k) {
          requests.push_back(
              {.fd = file.fd(),
               .offset = offset + k * kSlice,
               .buffer = region.span().subspan(100 + k * kSlice, kSlice),
               .registered_buffer = buffer.ok() ? buffer->index() : -1,
               .registered_file =
                   registered_file.ok() ? registered_file->index() : -1});
        }
        std::vector<absl::StatusOr<size_t>> got =
            co_await reader.ReadBatchAt(requests);
        for (size_t k = 0; k < 4; ++k) {
          EXPECT_TRUE(got[k].ok()) << got[k].status();
          if (!got[k].ok()) co_return;
          read.append(reinterpret_cast<const char*>(requests[k].buffer.data()),
                      *got[k]);
        }
        offset += 4 * kSlice;
      }
    });
    runner.RunToCompletion(/*threads=*/2);
    EXPECT_EQ(read.size(), file.content().size());
    EXPECT_TRUE(read == file.content());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Backends, AsyncFileReaderTest,
    ::testing::Combine(::testing::Bool(), ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) ? "IoUring" : "PreadThreads") +
             (std::get<1>(info.param) ? "CachedInline" : "AllToBackend");
    });

// Reads `requests` through `reader` on one thread; returns each result.
std::vector<absl::StatusOr<size_t>> ReadAll(
    AsyncFileReader& reader, asio::io_context& io,
    const std::vector<AsyncFileReader::ReadRequest>& requests) {
  CoroutineRunner runner(io);
  std::vector<absl::StatusOr<size_t>> got;
  runner.Spawn([&]() -> asio::awaitable<void> {
    got = co_await reader.ReadBatchAt(requests);
  });
  runner.RunToCompletion();
  return got;
}

TEST(AsyncFileReaderCacheTest, CachedBytesAreCopiedWithoutTheBackend) {
  const TempFile file(1 << 20);  // just written: in the page cache
  asio::io_context io;
  AsyncFileReader reader(io, {});
  std::string whole(file.content().size(), '\0');
  std::string past_end(16, 'x');
  const std::vector<AsyncFileReader::ReadRequest> requests = {
      {file.fd(), 0, std::as_writable_bytes(std::span(whole))},
      {file.fd(), file.content().size() + 5,
       std::as_writable_bytes(std::span(past_end))}};
  const std::vector<absl::StatusOr<size_t>> got = ReadAll(reader, io, requests);
  ASSERT_EQ(got.size(), 2u);
  ASSERT_TRUE(got[0].ok()) << got[0].status();
  EXPECT_EQ(*got[0], whole.size());
  EXPECT_EQ(whole, file.content());
  ASSERT_TRUE(got[1].ok()) << got[1].status();
  EXPECT_EQ(*got[1], 0u);
  EXPECT_EQ(reader.counts().inline_reads, 2u);
  EXPECT_EQ(reader.counts().backend_reads, 0u);
  EXPECT_EQ(reader.counts().inline_bytes, whole.size());
  EXPECT_EQ(reader.counts().backend_bytes, 0u);
}

TEST(AsyncFileReaderCacheTest, ACopyCutShortByEndOfFileAsksTheBackendOnce) {
  const TempFile file(1000);
  asio::io_context io;
  AsyncFileReader reader(io, {});
  std::string tail(500, '\0');
  const std::vector<AsyncFileReader::ReadRequest> requests = {
      {file.fd(), 900, std::as_writable_bytes(std::span(tail))}};
  const std::vector<absl::StatusOr<size_t>> got = ReadAll(reader, io, requests);
  ASSERT_TRUE(got[0].ok()) << got[0].status();
  ASSERT_EQ(*got[0], 100u);
  EXPECT_EQ(tail.substr(0, 100), file.content().substr(900));
  EXPECT_EQ(reader.counts().inline_reads, 1u);
  EXPECT_EQ(reader.counts().backend_reads, 1u);  // found end of file
}

TEST(AsyncFileReaderCacheTest, PagesNotInTheCacheAreReadByTheBackend) {
  const TempFile file(4 << 20);
  file.Evict();
  asio::io_context io;
  AsyncFileReader reader(io, {});
  std::string whole(file.content().size(), '\0');
  const std::vector<AsyncFileReader::ReadRequest> requests = {
      {file.fd(), 0, std::as_writable_bytes(std::span(whole))}};
  const std::vector<absl::StatusOr<size_t>> got = ReadAll(reader, io, requests);
  ASSERT_TRUE(got[0].ok()) << got[0].status();
  EXPECT_EQ(*got[0], whole.size());
  EXPECT_EQ(whole, file.content());
  EXPECT_EQ(reader.counts().backend_reads, 1u);
  // What the backend read and what was cached already add up to the file.
  EXPECT_EQ(reader.counts().inline_bytes + reader.counts().backend_bytes,
            whole.size());
  EXPECT_GT(reader.counts().backend_bytes, 0u);
}

TEST(AsyncFileReaderCacheTest, InjectedFaultsComeBeforeTheCache) {
  const TempFile file(4096);
  asio::io_context io;
  AsyncFileReader reader(io, {});
  AsyncFileReader::SetFaultInjectorForTesting(
      [](int, uint64_t) -> std::optional<int> { return EIO; });
  std::string block(4096, '\0');
  const std::vector<AsyncFileReader::ReadRequest> requests = {
      {file.fd(), 0, std::as_writable_bytes(std::span(block))}};
  const std::vector<absl::StatusOr<size_t>> got = ReadAll(reader, io, requests);
  AsyncFileReader::SetFaultInjectorForTesting(nullptr);
  EXPECT_FALSE(got[0].ok());
  EXPECT_EQ(reader.counts().inline_reads, 0u);
}

}  // namespace
}  // namespace sluice::io
