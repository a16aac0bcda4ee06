#include "io/async_file_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice::io {
namespace {

using ::sluice::testing::CoroutineRunner;

// A temporary file of `size` pseudo-random bytes, removed at destruction.
class TempFile {
 public:
  explicit TempFile(size_t size) {
    char path[] = "/tmp/sluice_reader_test_XXXXXX";
    fd_ = mkstemp(path);
    path_ = path;
    content_.resize(size);
    uint64_t state = 12345;
    for (char& byte : content_) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      byte = static_cast<char>(state >> 56);
    }
    EXPECT_EQ(write(fd_, content_.data(), size), static_cast<ssize_t>(size));
  }
  ~TempFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  int fd() const { return fd_; }
  const std::string& content() const { return content_; }

 private:
  int fd_;
  std::string path_;
  std::string content_;
};

class AsyncFileReaderTest : public ::testing::TestWithParam<bool> {};

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
  AsyncFileReader reader(io, {.use_io_uring = GetParam(), .queue_depth = 8});
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

TEST_P(AsyncFileReaderTest, BatchResumesOnceWithEveryResult) {
  const TempFile file(1 << 20);
  asio::io_context io;
  // More reads than the rings hold: the rest wait their turn.
  AsyncFileReader reader(
      io, {.use_io_uring = GetParam(), .queue_depth = 4, .rings = 2});
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

TEST_P(AsyncFileReaderTest, ReadsPastEndOfFileAreShort) {
  const TempFile file(1000);
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = GetParam()});
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
  AsyncFileReader reader(io, {.use_io_uring = GetParam()});
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
  AsyncFileReader reader(io, {.use_io_uring = GetParam()});
  if (GetParam() && !reader.uses_io_uring()) {
    // The kernel or sandbox forbids io_uring: the fallback must say why.
    EXPECT_FALSE(reader.fallback_reason().empty());
    EXPECT_EQ(reader.backend_name(), "pread-threads");
    return;
  }
  EXPECT_EQ(reader.backend_name(), GetParam() ? "io_uring" : "pread-threads");
}

INSTANTIATE_TEST_SUITE_P(Backends, AsyncFileReaderTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "IoUring" : "PreadThreads";
                         });

}  // namespace
}  // namespace sluice::io
