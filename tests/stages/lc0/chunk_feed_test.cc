// The chunk feed end to end: FilePathProvider -> ChunkSourceLoader ->
// ShufflingChunkPool (and the splitter), built from text configs through
// the factory, on files written by the test.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/metrics_accumulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/direct_file.h"
#include "stages/lc0/chunk.h"
#include "stages/lc0/chunk_source_loader.h"
#include "stages/lc0/shuffling_chunk_pool.h"
#include "stages/stage_factory.h"
#include "tests/stages/lc0/chunk_test_util.h"

namespace sluice::lc0 {
namespace {

using ::sluice::testing::TmpfsDirectory;
using testing::ChunkTar;
using testing::FakeGzip;
using ::testing::HasSubstr;
using testing::NextChunk;
using testing::ParseConfig;
using testing::StageTotals;
using testing::TarBytes;
using testing::TempDir;
using testing::WaitUntil;
using testing::WriteFile;
using testing::WriteFileAtomically;

using Key = std::pair<std::string, uint64_t>;

std::string Feed(const std::string& dir, const std::string& mode,
                 const std::string& pool, bool io_uring = true,
                 const std::string& loader = "") {
  return "worker_threads: 2 metrics_interval_seconds: 0.02 seed: 7 "
         "use_io_uring: " +
         std::string(io_uring ? "true" : "false") +
         " stage { name: 'files' file_path_provider { directory: '" + dir +
         "' mode: " + mode +
         " } } "
         "stage { name: 'loader' input: 'files' chunk_source_loader { " +
         loader +
         " } } "
         "stage { name: 'pool' input: 'loader' shuffling_chunk_pool { " +
         pool + " } }";
}

// Everything of a single-pass feed until end of stream.
std::vector<Chunk> Drain(DataLoader& loader, const std::string& alias = "") {
  std::vector<Chunk> chunks;
  while (std::optional<Chunk> chunk = NextChunk(loader, alias)) {
    chunks.push_back(*std::move(chunk));
  }
  return chunks;
}

class SinglePassTest : public ::testing::TestWithParam<bool> {};

TEST_P(SinglePassTest, EveryChunkExactlyOnceThenEnd) {
  TempDir dir;
  std::set<Key> expected;
  for (int t = 0; t < 6; ++t) {
    const std::string name = "t" + std::to_string(t) + ".tar";
    WriteFile(dir / name, ChunkTar(100 + 37 * t, 1000 * t));
    for (int i = 0; i < 100 + 37 * t; ++i) expected.insert({name, i});
  }
  std::filesystem::create_directory(dir / "loose");
  for (int g = 0; g < 20; ++g) {
    const std::string name = "training." + std::to_string(g) + ".gz";
    WriteFile(dir / ("loose/" + name), FakeGzip(name));
    expected.insert({name, 0});
  }
  DataLoader loader(CreateStage);
  loader.Configure(
      ParseConfig(Feed(dir.path(), "ONCE",
                       "single_pass: true reader_parallelism: 8", GetParam())));
  loader.Start();
  std::set<Key> seen;
  for (const Chunk& chunk : Drain(loader)) {
    EXPECT_TRUE(seen.insert({chunk.source_name, chunk.index_in_source}).second)
        << chunk.source_name << " " << chunk.index_in_source;
    EXPECT_EQ(chunk.data.substr(0, 2), "\x1f\x8b");
  }
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(NextChunk(loader), std::nullopt);
  loader.Stop();
  const auto pool = StageTotals(loader, "pool").shuffling_chunk_pool();
  EXPECT_EQ(pool.chunks_emitted(), expected.size());
  EXPECT_EQ(pool.sources_indexed(), 26u);
  EXPECT_EQ(pool.read_errors(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, SinglePassTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "io_uring" : "fallback";
                         });

// direct_io: the same chunks, read past the page cache; where the file
// system refuses O_DIRECT (tmpfs at /dev/shm), read buffered and counted.
TEST(ChunkSourceLoaderTest, DirectIoDeliversTheSameChunks) {
  for (const bool in_memory : {false, true}) {
    if (in_memory && TmpfsDirectory().empty()) continue;
    SCOPED_TRACE(in_memory ? "tmpfs" : "temp dir");
    const TempDir temp(in_memory ? TmpfsDirectory() : "");
    const std::string& dir = temp.path();
    std::set<Key> expected;
    for (int t = 0; t < 3; ++t) {
      const std::string name = "t" + std::to_string(t) + ".tar";
      WriteFile(dir + "/" + name, ChunkTar(50 + 7 * t, 100 * t));
      for (int i = 0; i < 50 + 7 * t; ++i) expected.insert({name, i});
    }
    for (int g = 0; g < 4; ++g) {
      const std::string name = "training." + std::to_string(g) + ".gz";
      WriteFile(dir + "/" + name, FakeGzip(name + std::string(5000, 'z')));
      expected.insert({name, 0});
    }
    absl::StatusOr<io::ReadableFile> probe =
        io::OpenForReading(dir + "/t0.tar", /*direct=*/true);
    ASSERT_TRUE(probe.ok()) << probe.status();
    close(probe->fd);
    const uint64_t refused = probe->refusal.empty() ? 0 : 7;
    DataLoader loader(CreateStage);
    loader.Configure(
        ParseConfig(Feed(dir, "ONCE", "single_pass: true reader_parallelism: 8",
                         /*io_uring=*/true, "direct_io: true")));
    loader.Start();
    std::set<Key> seen;
    for (const Chunk& chunk : Drain(loader)) {
      seen.insert({chunk.source_name, chunk.index_in_source});
      EXPECT_EQ(chunk.data.substr(0, 2), "\x1f\x8b");
    }
    loader.Stop();
    EXPECT_EQ(seen, expected);
    EXPECT_EQ(
        StageTotals(loader, "loader").chunk_source_loader().direct_io_refused(),
        refused);
    EXPECT_EQ(StageTotals(loader, "pool").shuffling_chunk_pool().read_errors(),
              0u);
  }
}

TEST(ShufflingChunkPoolTest, PassesCoverTheWindowWithoutRepeats) {
  TempDir dir;
  for (int t = 0; t < 6; ++t) {
    WriteFile(dir / ("t" + std::to_string(t) + ".tar"), ChunkTar(500));
  }
  DataLoader loader(CreateStage);
  loader.Configure(
      ParseConfig(Feed(dir.path(), "ONCE", "chunk_pool_size: 100000")));
  loader.Start();
  std::map<uint64_t, std::set<Key>> passes;
  for (int i = 0; i < 3 * 3000; ++i) {
    std::optional<Chunk> chunk = NextChunk(loader);
    ASSERT_TRUE(chunk.has_value());
    EXPECT_TRUE(passes[chunk->pass]
                    .insert({chunk->source_name, chunk->index_in_source})
                    .second)
        << "repeat within pass " << chunk->pass;
  }
  ASSERT_EQ(passes.size(), 3u);  // chunks leave in draw order
  for (const auto& [pass, keys] : passes) EXPECT_EQ(keys.size(), 3000u);
  loader.Stop();
  EXPECT_GE(StageTotals(loader, "pool").shuffling_chunk_pool().passes(), 2u);
}

// The first `count` chunks (source, index) of a fresh run.
std::vector<Key> FirstChunks(const std::string& dir, int threads, int count) {
  DataLoader loader(CreateStage);
  DataLoaderConfig config =
      ParseConfig(Feed(dir, "ONCE", "chunk_pool_size: 1000"));
  config.set_worker_threads(threads);
  loader.Configure(config);
  loader.Start();
  std::vector<Key> keys;
  for (int i = 0; i < count; ++i) {
    std::optional<Chunk> chunk = NextChunk(loader);
    if (!chunk) break;
    keys.push_back({chunk->source_name, chunk->index_in_source});
  }
  return keys;
}

TEST(ShufflingChunkPoolTest, OrderDependsOnTheSeedNotOnThreads) {
  TempDir dir;
  for (int t = 0; t < 3; ++t) {
    WriteFile(dir / ("t" + std::to_string(t) + ".tar"), ChunkTar(200));
  }
  const std::vector<Key> one = FirstChunks(dir.path(), 1, 700);
  EXPECT_EQ(one.size(), 700u);
  EXPECT_EQ(one, FirstChunks(dir.path(), 2, 700));
}

TEST(ShufflingChunkPoolTest, StartupIndexesNewestFirstAndWindowEvicts) {
  TempDir dir;
  for (int t = 0; t < 4; ++t) {  // 4 x 100 chunks, window 200
    WriteFile(dir / ("t" + std::to_string(t) + ".tar"), ChunkTar(100));
  }
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(Feed(
      dir.path(), "WATCH", "chunk_pool_size: 200 indexing_parallelism: 1")));
  loader.Start();
  std::set<std::string> names;
  for (int i = 0; i < 400; ++i) names.insert(NextChunk(loader)->source_name);
  EXPECT_EQ(names, (std::set<std::string>{"t2.tar", "t3.tar"}));
  auto pool = [&] {
    return StageTotals(loader, "pool").shuffling_chunk_pool();
  };
  ASSERT_TRUE(WaitUntil([&] { return pool().sources_indexed() == 2; }));
  EXPECT_EQ(pool().sources_skipped_at_startup(), 2u);

  WriteFileAtomically(dir / "t4.tar", ChunkTar(100));
  ASSERT_TRUE(WaitUntil([&] { return pool().chunks_dropped() == 100; }));
  EXPECT_EQ(pool().sources(), 2u);
  EXPECT_EQ(pool().chunks_in_pool(), 200u);
  EXPECT_EQ(pool().capacity(), 200u);
  // Once the reads in flight have drained, only t3 and t4 come out.
  int from_t4 = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string name = NextChunk(loader)->source_name;
    if (i >= 200) {
      EXPECT_NE(name, "t2.tar");
    }
    from_t4 += name == "t4.tar";
  }
  EXPECT_GT(from_t4, 0);
  loader.Stop();
}

TEST(ShufflingChunkPoolTest, AnchorsThroughTheControlPlane) {
  TempDir dir;
  WriteFile(dir / "a.tar", ChunkTar(10));
  WriteFile(dir / "b.tar", ChunkTar(20));
  DataLoader loader(CreateStage);
  loader.Configure(
      ParseConfig(Feed(dir.path(), "WATCH", "chunk_pool_size: 1000")));
  loader.Start();
  ASSERT_TRUE(NextChunk(loader).has_value());  // the window is built
  StageControlRequest reset;
  reset.mutable_chunk_pool_request()->set_reset_chunk_anchor(true);
  std::vector<StageControlResponse> responses =
      loader.SendControlMessage(reset);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].stage_name(), "pool");
  EXPECT_EQ(responses[0].chunk_pool_response().chunk_anchor(), "b.tar");
  EXPECT_EQ(responses[0].chunk_pool_response().chunks_since_anchor(), 0);

  WriteFileAtomically(dir / "c.tar", ChunkTar(30));
  StageControlRequest query;
  query.mutable_chunk_pool_request();
  ASSERT_TRUE(WaitUntil([&] {
    return loader.SendControlMessage(query)[0]
               .chunk_pool_response()
               .chunks_since_anchor() == 30;
  }));
  StageControlRequest set;
  set.mutable_chunk_pool_request()->set_set_chunk_anchor("a.tar");
  responses = loader.SendControlMessage(set);
  EXPECT_EQ(responses[0].chunk_pool_response().chunk_anchor(), "a.tar");
  EXPECT_EQ(responses[0].chunk_pool_response().chunks_since_anchor(), 50);
  ASSERT_TRUE(WaitUntil([&] {
    return StageTotals(loader, "pool").shuffling_chunk_pool().anchor() ==
           "a.tar";
  }));
  loader.Stop();
}

TEST(ChunkFeedBadInputTest, EachCaseSkippedAndCountedFeedGoesOn) {
  TempDir dir;
  const std::string good = ChunkTar(3);
  std::string bad_checksum = good;
  bad_checksum[1024 + 5] ^= 0x55;
  WriteFile(dir / "good.tar", ChunkTar(5));
  WriteFile(dir / "zero.tar", "");
  WriteFile(dir / "zero.gz", "");
  WriteFile(dir / "checksum.tar", bad_checksum);           // keeps 1
  WriteFile(dir / "truncated.tar", good.substr(0, 2148));  // keeps 2
  WriteFile(dir / "past_eof.tar", good.substr(0, 2564));   // keeps 2
  WriteFile(dir / "notgz.tar", TarBytes({{"training.1.gz", "plain text"},
                                         {"training.2.gz", FakeGzip("ok")}}));
  WriteFile(dir / "notgz.gz", "plain text");
  WriteFile(dir / "notes.txt", "not a chunk");
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(Feed(dir.path(), "ONCE", "single_pass: true")));
  loader.Start();
  const std::vector<Chunk> chunks = Drain(loader);
  EXPECT_EQ(chunks.size(), 5u + 1 + 2 + 2 + 1);
  loader.Stop();
  const StageMetricProto files = StageTotals(loader, "loader");
  EXPECT_EQ(SkippedByReason(files).at("zero_length"), 2u);
  EXPECT_EQ(SkippedByReason(files).at("unknown_file_type"), 1u);
  const StageMetricProto pool = StageTotals(loader, "pool");
  EXPECT_EQ(SkippedByReason(pool).at("tar_bad_checksum"), 1u);
  EXPECT_EQ(SkippedByReason(pool).at("tar_truncated"), 1u);
  EXPECT_EQ(SkippedByReason(pool).at("tar_member_past_eof"), 1u);
  EXPECT_EQ(SkippedByReason(pool).at("not_gzip"), 2u);
  // Chunks read whole that are not gzip are bad data, not failed reads.
  EXPECT_EQ(pool.shuffling_chunk_pool().read_errors(), 0u);
}

TEST(ChunkFeedBadInputTest, MacOsAppleDoubleMembersAreSkippedQuietly) {
  TempDir dir;
  // bsdtar on macOS writes a `._name` resource fork before each file, and
  // Finder copies may hold a `__MACOSX/` folder; neither is gzip.
  const std::string fork = "Mac OS X        ATTR resource fork, not gzip";
  WriteFile(dir / "mac.tar",
            TarBytes({{"games/._training.1.gz", fork},
                      {"games/training.1.gz", FakeGzip("one")},
                      {"._training.2.gz", fork},
                      {"training.2.gz", FakeGzip("two")},
                      {"__MACOSX/games/._training.3.gz", fork},
                      {"games/__MACOSX/training.4.gz", fork}}));
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(Feed(dir.path(), "ONCE", "single_pass: true")));
  loader.Start();
  std::set<Key> chunks;
  for (const Chunk& chunk : Drain(loader)) {
    chunks.insert({chunk.source_name, chunk.index_in_source});
  }
  loader.Stop();
  // The AppleDouble members take no chunk index.
  EXPECT_EQ(chunks, (std::set<Key>{{"mac.tar", 0}, {"mac.tar", 1}}));
  const StageMetricProto pool = StageTotals(loader, "pool");
  const std::map<std::string, uint64_t> skipped = SkippedByReason(pool);
  EXPECT_EQ(skipped, (std::map<std::string, uint64_t>{{"apple_double", 4}}));
  EXPECT_EQ(pool.shuffling_chunk_pool().read_errors(), 0u);
}

TEST(AppleDoubleTest, RecognisedByNameOnly) {
  EXPECT_TRUE(IsAppleDoubleMember("._training.1.gz"));
  EXPECT_TRUE(IsAppleDoubleMember("a/b/._training.1.gz"));
  EXPECT_TRUE(IsAppleDoubleMember("__MACOSX/training.1.gz"));
  EXPECT_TRUE(IsAppleDoubleMember("a/__MACOSX/b/training.1.gz"));
  EXPECT_FALSE(IsAppleDoubleMember("training.1.gz"));
  EXPECT_FALSE(IsAppleDoubleMember("a._b/training._1.gz"));
  EXPECT_FALSE(IsAppleDoubleMember("__MACOSX.gz"));
  EXPECT_FALSE(IsAppleDoubleMember("my__MACOSX/training.1.gz"));
}

TEST(ChunkFeedBadInputTest, UnreadableFilesAreSkipped) {
  TempDir dir;
  WriteFile(dir / "good.tar", ChunkTar(4));
  WriteFile(dir / "locked.tar", ChunkTar(4));
  chmod((dir / "locked.tar").c_str(), 0);
  std::filesystem::create_directory(dir / "dir.tar");  // not a regular file
  DataLoader loader(CreateStage);
  loader.Configure(ParseConfig(Feed(dir.path(), "ONCE", "single_pass: true")));
  loader.Start();
  const size_t expected = geteuid() == 0 ? 8 : 4;  // root reads anything
  EXPECT_EQ(Drain(loader).size(), expected);
  loader.Stop();
  const StageMetricProto files = StageTotals(loader, "loader");
  if (geteuid() != 0) {
    EXPECT_EQ(SkippedByReason(files).at("permission_denied"), 1u);
  }
  EXPECT_EQ(SkippedByReason(files).count("not_regular_file"),
            0u);  // not scanned
}

// A source stage with a fixed list of paths, so that a file can vanish
// between discovery and loading.
class PathList final : public Stage {
 public:
  static std::vector<std::string>& paths() {
    static std::vector<std::string> list;
    return list;
  }
  explicit PathList(const StageContext& context)
      : Stage(context), output_(AddOutput<DiscoveredFile>()) {}
  void Start(const StageRuntime& runtime) override {
    SpawnWorkers(runtime, 1, [this](int) { return Run(); });
  }

 private:
  asio::awaitable<void> Run() {
    for (const std::string& path : paths()) {
      DiscoveredFile file{path, DiscoveryPhase::kInitialScan};
      if (!co_await output_->Send(std::move(file))) co_return;
    }
    DiscoveredFile marker{"", DiscoveryPhase::kInitialScanComplete};
    co_await output_->Send(std::move(marker));
  }
  Channel<DiscoveredFile>* output_;
};

TEST(ChunkFeedBadInputTest, FileDeletedBetweenDiscoveryAndReading) {
  TempDir dir;
  WriteFile(dir / "good.tar", ChunkTar(3));
  PathList::paths() = {dir / "good.tar", dir / "deleted.tar", dir.path()};
  DataLoader loader([](const StageContext& context)
                        -> absl::StatusOr<std::unique_ptr<Stage>> {
    if (context.name() == "paths") {
      return std::unique_ptr<Stage>(new PathList(context));
    }
    return CreateStage(context);
  });
  loader.Configure(ParseConfig(R"pb(
    stage {
      name: "paths"
      counting_source {}
    }
    stage {
      name: "loader"
      input: "paths"
      chunk_source_loader {}
    }
    stage {
      name: "pool"
      input: "loader"
      shuffling_chunk_pool { single_pass: true }
    })pb"));
  loader.Start();
  EXPECT_EQ(Drain(loader).size(), 3u);
  loader.Stop();
  const StageMetricProto files = StageTotals(loader, "loader");
  EXPECT_EQ(SkippedByReason(files).at("file_missing"), 1u);
  EXPECT_EQ(SkippedByReason(files).at("unknown_file_type"), 1u);
}

TEST(ChunkFeedConfigTest, ErrorsNameTheField) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const struct {
    std::string pool, field;
  } cases[] = {
      {"chunk_pool_size: 0", "chunk_pool_size"},
      {"reader_parallelism: 0", "reader_parallelism"},
      {"indexing_parallelism: 0", "indexing_parallelism"},
      {"max_chunk_bytes: 0", "max_chunk_bytes"},
  };
  for (const auto& c : cases) {
    DataLoader loader(CreateStage);
    try {
      loader.Configure(ParseConfig(Feed(dir, "ONCE", c.pool)));
      ADD_FAILURE() << "no error for " << c.pool;
    } catch (const ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr(c.field));
    }
  }
  DataLoader wrong_input(CreateStage);
  EXPECT_THROW(wrong_input.Configure(ParseConfig(R"pb(
    stage {
      name: "n"
      counting_source {}
    }
    stage {
      name: "pool"
      input: "n"
      shuffling_chunk_pool {}
    })pb")),
               ConfigError);
}

}  // namespace
}  // namespace sluice::lc0
