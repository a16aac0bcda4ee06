#include "stages/lc0/chunk.h"

#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "io/async_file_reader.h"
#include "tests/stages/lc0/chunk_test_util.h"
#include "tests/testing/coroutine_runner.h"

namespace sluice::lc0 {
namespace {

using testing::ChunkTar;
using testing::FakeGzip;
using testing::TarBytes;
using testing::TempDir;
using testing::WriteFile;

// Runs Index / ReadChunk synchronously on a reader with io_uring or with
// its fallback, on sources opened with O_DIRECT or buffered (the test
// parameters).
class ChunkSourceTest
    : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  absl::Status Index(const std::shared_ptr<ChunkSource>& source) {
    absl::Status status;
    Run([&]() -> asio::awaitable<void> {
      status = co_await source->Index(*reader_);
    });
    return status;
  }

  absl::StatusOr<Chunk> Read(const std::shared_ptr<ChunkSource>& source,
                             size_t i, uint64_t max_bytes = 1 << 20) {
    absl::StatusOr<Chunk> chunk;
    Run([&]() -> asio::awaitable<void> {
      chunk = co_await source->ReadChunk(*reader_, i, max_bytes);
    });
    return chunk;
  }

  std::shared_ptr<ChunkSource> Open(const std::string& path) {
    absl::StatusOr<std::shared_ptr<ChunkSource>> source =
        ChunkSource::Open(path, /*direct_io=*/std::get<1>(GetParam()));
    EXPECT_TRUE(source.ok()) << source.status();
    return source.ok() ? *source : nullptr;
  }

  // Runs `lambda` on a fresh io_context with a fresh reader_.
  template <typename Lambda>
  void Run(Lambda lambda) {
    asio::io_context io;
    io::AsyncFileReader reader(io, {.use_io_uring = std::get<0>(GetParam())});
    reader_ = &reader;
    sluice::testing::CoroutineRunner runner(io);
    runner.Spawn(std::move(lambda));
    runner.RunToCompletion();
    reader_ = nullptr;
  }

  io::AsyncFileReader* reader_ = nullptr;
  TempDir dir_;
};

TEST_P(ChunkSourceTest, TarMembersInOrderNonGzIgnored) {
  const std::string path = dir_ / "a.tar";
  WriteFile(path, TarBytes({{"x/training.1.gz", FakeGzip("1")},
                            {"README.txt", "not a chunk"},
                            {"training.2.gz", FakeGzip("2")}}));
  auto source = Open(path);
  EXPECT_EQ(source->name(), "a.tar");
  EXPECT_EQ(source->kind(), ChunkSource::Kind::kTar);
  ASSERT_TRUE(Index(source).ok());
  ASSERT_EQ(source->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    absl::StatusOr<Chunk> chunk = Read(source, i);
    ASSERT_TRUE(chunk.ok()) << chunk.status();
    EXPECT_EQ(chunk->data, FakeGzip(std::to_string(i + 1)));
    EXPECT_EQ(chunk->source_name, "a.tar");
    EXPECT_EQ(chunk->index_in_source, i);
    EXPECT_EQ(chunk->id(), ChunkId("a.tar", i));
  }
}

TEST_P(ChunkSourceTest, LooseGzipIsOneChunk) {
  const std::string path = dir_ / "training.7.gz";
  WriteFile(path, FakeGzip("7"));
  auto source = Open(path);
  EXPECT_EQ(source->kind(), ChunkSource::Kind::kGzip);
  ASSERT_TRUE(Index(source).ok());
  ASSERT_EQ(source->size(), 1u);
  EXPECT_EQ(Read(source, 0)->data, FakeGzip("7"));
}

TEST_P(ChunkSourceTest, RealToolArchivesWithLongNames) {
  for (const char* fixture :
       {"gnutar_gnu.tar", "gnutar_pax.tar", "gnutar_ustar.tar",
        "python_gnu.tar", "python_pax.tar"}) {
    SCOPED_TRACE(fixture);
    auto source = Open(std::string("tests/data/tar/") + fixture);
    ASSERT_TRUE(Index(source).ok());
    ASSERT_EQ(source->size(), 1u);  // the one .gz member (139-char path)
    absl::StatusOr<Chunk> chunk = Read(source, 0);
    ASSERT_TRUE(chunk.ok()) << chunk.status();
    EXPECT_EQ(chunk->data.size(), 30u);
  }
}

TEST_P(ChunkSourceTest, DamagedTarsKeepTheMembersBeforeTheDamage) {
  const std::string good = ChunkTar(3);  // headers at 0, 1024, 2048
  std::string bad_checksum = good;
  bad_checksum[1024 + 5] ^= 0x55;
  const struct {
    std::string name, bytes, reason;
    size_t kept;
  } cases[] = {
      {"checksum.tar", bad_checksum, "tar_bad_checksum", 1},
      {"truncated.tar", good.substr(0, 2048 + 100), "tar_truncated", 2},
      {"past_eof.tar", good.substr(0, 2048 + 512 + 4), "tar_member_past_eof",
       2},
      {"garbage.tar", std::string(1000, 'x'), "tar_bad_checksum", 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    WriteFile(dir_ / c.name, c.bytes);
    auto source = Open(dir_ / c.name);
    absl::Status damage = Index(source);
    EXPECT_FALSE(damage.ok());
    EXPECT_EQ(IndexSkipReason(damage), c.reason) << damage;
    EXPECT_EQ(source->size(), c.kept);
  }
}

TEST_P(ChunkSourceTest, ReadErrorsHaveReasons) {
  WriteFile(dir_ / "notgz.tar", TarBytes({{"training.1.gz", "plain text"}}));
  auto tar = Open(dir_ / "notgz.tar");
  ASSERT_TRUE(Index(tar).ok());
  EXPECT_EQ(ReadSkipReason(Read(tar, 0).status()), "not_gzip");
  EXPECT_EQ(ReadSkipReason(Read(tar, 0, /*max_bytes=*/4).status()),
            "chunk_too_large");

  WriteFile(dir_ / "gone.gz", FakeGzip("g"));
  auto gone = Open(dir_ / "gone.gz");
  ASSERT_TRUE(Index(gone).ok());
  std::filesystem::remove(dir_ / "gone.gz");
  EXPECT_EQ(ReadSkipReason(Read(gone, 0).status()), "file_missing");

  WriteFile(dir_ / "shrunk.tar", ChunkTar(2));
  auto shrunk = Open(dir_ / "shrunk.tar");
  ASSERT_TRUE(Index(shrunk).ok());
  std::filesystem::resize_file(dir_ / "shrunk.tar", 1024 + 10);
  EXPECT_EQ(ReadSkipReason(Read(shrunk, 1).status()), "file_truncated");
}

TEST_P(ChunkSourceTest, ReadChunksGivesEachResultInOrder) {
  WriteFile(dir_ / "mixed.tar",
            TarBytes({{"training.1.gz", FakeGzip("1")},
                      {"training.2.gz", "plain text"},
                      {"training.3.gz", FakeGzip(std::string(100, '3'))}}));
  auto tar = Open(dir_ / "mixed.tar");
  ASSERT_TRUE(Index(tar).ok());
  WriteFile(dir_ / "loose.gz", FakeGzip("l"));
  auto loose = Open(dir_ / "loose.gz");
  ASSERT_TRUE(Index(loose).ok());
  WriteFile(dir_ / "gone.gz", FakeGzip("g"));
  auto gone = Open(dir_ / "gone.gz");
  ASSERT_TRUE(Index(gone).ok());
  std::filesystem::remove(dir_ / "gone.gz");
  const ChunkSource::Ref refs[] = {{tar.get(), 2}, {gone.get(), 0},
                                   {tar.get(), 1}, {loose.get(), 0},
                                   {tar.get(), 0}, {tar.get(), 2}};
  const uint64_t max_bytes = FakeGzip("1").size() + 10;
  std::vector<absl::StatusOr<Chunk>> chunks;
  Run([&]() -> asio::awaitable<void> {
    chunks = co_await ChunkSource::ReadChunks(*reader_, refs, max_bytes);
  });
  ASSERT_EQ(chunks.size(), 6u);
  EXPECT_EQ(ReadSkipReason(chunks[0].status()), "chunk_too_large");
  EXPECT_EQ(ReadSkipReason(chunks[1].status()), "file_missing");
  EXPECT_EQ(ReadSkipReason(chunks[2].status()), "not_gzip");
  ASSERT_TRUE(chunks[3].ok()) << chunks[3].status();
  EXPECT_EQ(chunks[3]->data, FakeGzip("l"));
  ASSERT_TRUE(chunks[4].ok()) << chunks[4].status();
  EXPECT_EQ(chunks[4]->data, FakeGzip("1"));
  EXPECT_EQ(chunks[4]->source_name, "mixed.tar");
  EXPECT_EQ(chunks[4]->index_in_source, 0u);
  EXPECT_EQ(ReadSkipReason(chunks[5].status()), "chunk_too_large");
}

TEST_P(ChunkSourceTest, FilteredViewKeepsOriginalIndices) {
  WriteFile(dir_ / "f.tar", ChunkTar(10));
  auto whole = Open(dir_ / "f.tar");
  auto odd = whole->WithFilter(
      [](std::string_view, uint64_t index) { return index % 2 == 1; });
  auto odd_big = odd->WithFilter(
      [](std::string_view, uint64_t index) { return index > 5; });
  ASSERT_TRUE(Index(odd).ok());
  ASSERT_TRUE(Index(odd_big).ok());
  ASSERT_EQ(odd->size(), 5u);
  ASSERT_EQ(odd_big->size(), 2u);
  EXPECT_EQ(odd_big->location(0).index_in_source, 7u);
  absl::StatusOr<Chunk> chunk = Read(odd_big, 1);
  ASSERT_TRUE(chunk.ok());
  EXPECT_EQ(chunk->index_in_source, 9u);
  EXPECT_EQ(chunk->data, FakeGzip("9"));
  EXPECT_EQ(whole->size(), 0u);  // views are indexed independently
}

INSTANTIATE_TEST_SUITE_P(
    Backends, ChunkSourceTest,
    ::testing::Combine(::testing::Bool(), ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) ? "io_uring" : "fallback") +
             (std::get<1>(info.param) ? "_direct" : "_buffered");
    });

// tmpfs keeps files in memory: a source asked to read with O_DIRECT there
// is read buffered and says why.
TEST(ChunkSourceOpenTest, DirectIoOnTmpfsFallsBackAndSaysWhy) {
  struct statfs shm;
  if (statfs("/dev/shm", &shm) != 0 || shm.f_type != 0x01021994) {
    GTEST_SKIP() << "no tmpfs at /dev/shm here";
  }
  const std::string path =
      "/dev/shm/sluice_chunk_test_" + std::to_string(getpid()) + ".tar";
  WriteFile(path, ChunkTar(2));
  absl::StatusOr<std::shared_ptr<ChunkSource>> source =
      ChunkSource::Open(path, /*direct_io=*/true);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_NE((*source)->direct_io_refusal().find("tmpfs"), std::string::npos)
      << (*source)->direct_io_refusal();
  absl::StatusOr<std::shared_ptr<ChunkSource>> buffered =
      ChunkSource::Open(path);
  ASSERT_TRUE(buffered.ok()) << buffered.status();
  EXPECT_TRUE((*buffered)->direct_io_refusal().empty());
  std::filesystem::remove(path);
}

TEST(ChunkSourceOpenTest, Errors) {
  TempDir dir;
  EXPECT_EQ(ChunkSource::Open(dir / "missing.tar").status().code(),
            absl::StatusCode::kNotFound);
  std::filesystem::create_directory(dir / "dir.tar");
  EXPECT_EQ(ChunkSource::Open(dir / "dir.tar").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ChunkSource::Open(dir / "x.txt").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The status code ChunkSource::Open gives `path`, opened by an unprivileged
// user: in a child process that drops root first (root reads any file).
absl::StatusCode OpenAsUnprivilegedUser(const std::string& path) {
  if (geteuid() != 0) return ChunkSource::Open(path).status().code();
  const pid_t child = fork();
  if (child == 0) {
    constexpr uid_t kNobody = 65534;
    if (setresgid(kNobody, kNobody, kNobody) != 0 ||
        setresuid(kNobody, kNobody, kNobody) != 0) {
      _exit(255);
    }
    _exit(static_cast<int>(ChunkSource::Open(path).status().code()));
  }
  int status = 0;
  waitpid(child, &status, 0);
  return static_cast<absl::StatusCode>(WEXITSTATUS(status));
}

TEST(ChunkSourceOpenTest, PermissionDenied) {
  TempDir dir;
  WriteFile(dir / "locked.tar", ChunkTar(1));
  chmod((dir / "locked.tar").c_str(), 0);
  EXPECT_EQ(OpenAsUnprivilegedUser(dir / "locked.tar"),
            absl::StatusCode::kPermissionDenied);
}

TEST(ChunkIdTest, StableAcrossRunsAndMachines) {
  // Pinned values: FNV-1a + splitmix64 are fully specified.
  EXPECT_EQ(ChunkId("training-run1-test80-20250101-0000.tar", 0),
            ChunkId("training-run1-test80-20250101-0000.tar", 0));
  EXPECT_NE(ChunkId("a.tar", 0), ChunkId("a.tar", 1));
  EXPECT_NE(ChunkId("a.tar", 0), ChunkId("b.tar", 0));
  EXPECT_EQ(ChunkId("a.tar", 3),
            0xd3540289f4b091d9ULL);  // computed independently
}

}  // namespace
}  // namespace sluice::lc0
