#include "io/direct_file.h"

#include <sys/vfs.h>
#include <unistd.h>

#include <string>
#include <tuple>
#include <vector>

#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "io/aligned_buffer.h"
#include "io/async_file_reader.h"
#include "tests/io/temp_file.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice::io {
namespace {

using ::sluice::testing::CoroutineRunner;

// Not a multiple of any block size: the last block is partial.
constexpr size_t kFileBytes = 3 * 4096 + 1234;

TEST(OpenForReadingTest, BufferedWhenNotAskedForDirect) {
  const TempFile file(100);
  absl::StatusOr<ReadableFile> opened = OpenForReading(file.path(), false);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_GE(opened->fd, 0);
  EXPECT_EQ(opened->direct_alignment, 0u);
  EXPECT_TRUE(opened->refusal.empty());
  close(opened->fd);
}

TEST(OpenForReadingTest, AMissingFileIsAnError) {
  EXPECT_TRUE(absl::IsNotFound(
      OpenForReading("/nonexistent/sluice_direct_test", true).status()));
}

// tmpfs keeps files in memory: direct reads would not bypass anything, so
// the file opens buffered and says why.
TEST(OpenForReadingTest, FallsBackToBufferedOnTmpfs) {
  struct statfs fs;
  if (statfs("/dev/shm", &fs) != 0 || fs.f_type != 0x01021994) {
    GTEST_SKIP() << "no tmpfs at /dev/shm here";
  }
  const TempFile file(kFileBytes, "/dev/shm");
  absl::StatusOr<ReadableFile> opened = OpenForReading(file.path(), true);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->direct_alignment, 0u);
  EXPECT_NE(opened->refusal.find("tmpfs"), std::string::npos)
      << opened->refusal;
  std::string whole(kFileBytes, '\0');
  EXPECT_EQ(pread(opened->fd, whole.data(), whole.size(), 0),
            static_cast<ssize_t>(kFileBytes));
  EXPECT_EQ(whole, file.content());
  close(opened->fd);
}

// Reads of an O_DIRECT file through the reader, on either backend: aligned
// requests go straight to the buffer, others through a bounce buffer, and
// the partial last block reads short.
class DirectReadTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    file_ = std::make_unique<TempFile>(kFileBytes);
    absl::StatusOr<ReadableFile> opened = OpenForReading(file_->path(), true);
    ASSERT_TRUE(opened.ok()) << opened.status();
    opened_ = *opened;
    if (opened_.direct_alignment == 0) {
      close(opened_.fd);
      GTEST_SKIP() << "/tmp does no direct I/O here: " << opened_.refusal;
    }
  }
  void TearDown() override {
    if (opened_.fd >= 0) close(opened_.fd);
  }
  AsyncFileReader::ReadRequest Request(uint64_t offset,
                                       std::span<std::byte> buffer) const {
    return {.fd = opened_.fd,
            .offset = offset,
            .buffer = buffer,
            .direct_alignment = opened_.direct_alignment};
  }

  std::unique_ptr<TempFile> file_;
  ReadableFile opened_;
};

TEST_P(DirectReadTest, AlignedAndUnalignedReadsAndTheTail) {
  asio::io_context io;
  AsyncFileReader reader(io, {.use_io_uring = GetParam()});
  const std::string& content = file_->content();
  AlignedBuffer aligned(4 * 4096);
  std::string unaligned(5000, '\0');
  std::string unaligned_in_batch(5000, '\0');
  std::string tail(100, '\0');
  std::string beyond(10, '\0');
  std::string whole(kFileBytes, '\0');
  std::vector<absl::StatusOr<size_t>> got;
  std::vector<absl::StatusOr<size_t>> batch;
  CoroutineRunner runner(io);
  runner.Spawn([&]() -> asio::awaitable<void> {
    got.push_back(co_await reader.ReadAt(Request(0, aligned.span())));
    got.push_back(co_await reader.ReadAt(
        Request(100, std::as_writable_bytes(std::span(unaligned)))));
    got.push_back(co_await reader.ReadAt(
        Request(kFileBytes - 10, std::as_writable_bytes(std::span(tail)))));
    got.push_back(co_await reader.ReadAt(
        Request(kFileBytes + 5000, std::as_writable_bytes(std::span(beyond)))));
    got.push_back(co_await reader.ReadFullyAt(
        Request(0, std::as_writable_bytes(std::span(whole)))));
    const std::vector<AsyncFileReader::ReadRequest> requests = {
        Request(4096, aligned.span().subspan(0, 4096)),
        Request(777, std::as_writable_bytes(std::span(unaligned_in_batch)))};
    batch = co_await reader.ReadBatchAt(requests);
  });
  runner.RunToCompletion();
  ASSERT_EQ(got.size(), 5u);
  for (const auto& result : got) ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*got[0], kFileBytes);  // asked for 16384: short at end of file
  EXPECT_EQ(*got[1], 5000u);
  EXPECT_EQ(unaligned, content.substr(100, 5000));
  EXPECT_EQ(*got[2], 10u);
  EXPECT_EQ(tail.substr(0, 10), content.substr(kFileBytes - 10));
  EXPECT_EQ(*got[3], 0u);
  EXPECT_EQ(*got[4], kFileBytes);
  EXPECT_EQ(whole, content);
  ASSERT_EQ(batch.size(), 2u);
  ASSERT_TRUE(batch[0].ok()) << batch[0].status();
  ASSERT_TRUE(batch[1].ok()) << batch[1].status();
  EXPECT_EQ(*batch[0], 4096u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(aligned.data()), 4096),
            content.substr(4096, 4096));
  EXPECT_EQ(*batch[1], 5000u);
  EXPECT_EQ(unaligned_in_batch, content.substr(777, 5000));
  // Straight to the buffer: the aligned reads (the first, the batch's
  // first); every other one bounced.
  EXPECT_EQ(reader.counts().bounced_reads, reader.counts().backend_reads - 2);
  EXPECT_EQ(reader.counts().inline_reads, 0u);  // never the page cache
  // The bytes counted are those the requests got, not the aligned spans
  // read around them.
  size_t delivered = 0;
  for (const auto& result : got) delivered += *result;
  for (const auto& result : batch) delivered += *result;
  EXPECT_EQ(reader.counts().backend_bytes, delivered);
}

INSTANTIATE_TEST_SUITE_P(Backends, DirectReadTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "IoUring" : "PreadThreads";
                         });

}  // namespace
}  // namespace sluice::io
