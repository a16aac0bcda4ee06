#include "io/tar_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sluice::io {

// Found by googletest through argument-dependent lookup.
void PrintTo(const TarMember& member, std::ostream* os) {
  *os << "{" << member.name << ", " << member.data_offset << ", " << member.size
      << "}";
}

namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kLongName[] =
    "training-run1-test80-20250101-0017/"
    "a-deliberately-long-directory-name-so-that-the-path-exceeds-one-hundred-"
    "characters/training.123456789.gz";

// Runs the pull parser over an in-memory archive, recording each read.
TarIndex IndexString(const std::string& archive, TarLimits limits = {},
                     std::vector<TarReadRequest>* reads = nullptr) {
  TarIndexer indexer(archive.size(), limits);
  while (std::optional<TarReadRequest> read = indexer.NextRead()) {
    if (reads) reads->push_back(*read);
    indexer.OnData(std::string_view(archive).substr(read->offset, read->length))
        .IgnoreError();
  }
  return indexer.TakeIndex();
}

// Overwrites block[offset, offset + bytes.size()).
void Put(std::string& block, size_t offset, std::string_view bytes) {
  std::copy(bytes.begin(), bytes.end(), block.begin() + offset);
}

// A ustar header block; `size_field` is the raw size field when given.
std::string Header(const std::string& name, uint64_t size, char type = '0',
                   std::string size_field = "") {
  std::string block(kTarBlockSize, '\0');
  Put(block, 0, name.substr(0, 100));
  Put(block, 100, "0000644");
  if (size_field.empty()) {
    char octal[12];
    std::snprintf(octal, sizeof(octal), "%011llo",
                  static_cast<unsigned long long>(size));
    size_field = octal;
  }
  Put(block, 124, size_field);
  block[156] = type;
  Put(block, 257,
      std::string_view("ustar\0"
                       "00",
                       8));
  Put(block, 148, "        ");
  unsigned sum = 0;
  for (unsigned char c : block) sum += c;
  char checksum[7];
  std::snprintf(checksum, sizeof(checksum), "%06o", sum);
  Put(block, 148, std::string_view(checksum, 7));
  return block;
}

// A member: header plus data padded to whole blocks.
std::string Member(const std::string& name, const std::string& data,
                   char type = '0') {
  std::string padded = data;
  padded.resize((data.size() + 511) / 512 * 512, '\0');
  return Header(name, data.size(), type) + padded;
}

std::string EndMarker() { return std::string(2 * kTarBlockSize, '\0'); }

std::string ReadAt(int fd, const TarMember& member) {
  std::string bytes(member.size, '\0');
  EXPECT_EQ(pread(fd, bytes.data(), bytes.size(), member.data_offset),
            static_cast<ssize_t>(member.size));
  return bytes;
}

struct Fixture {
  std::string file;
  bool has_long_name;
};

class TarFixtureTest : public ::testing::TestWithParam<Fixture> {};

TEST_P(TarFixtureTest, IndexesRegularFilesOnly) {
  const std::string path = "tests/data/tar/" + GetParam().file;
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << path;
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);

  absl::StatusOr<TarIndex> index = IndexTarFile(fd, st.st_size);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_TRUE(index->error.ok()) << index->error;
  const std::vector<TarMember>& members = index->members;
  ASSERT_EQ(members.size(), GetParam().has_long_name ? 3u : 2u);
  EXPECT_EQ(members[0].name, "short.txt");
  EXPECT_EQ(ReadAt(fd, members[0]), "short member\n");
  EXPECT_EQ(members[1].name, "empty.txt");
  EXPECT_EQ(members[1].size, 0u);
  if (GetParam().has_long_name) {
    EXPECT_EQ(members[2].name, kLongName);
    EXPECT_EQ(members[2].size, 30u);
    EXPECT_EQ(ReadAt(fd, members[2]).substr(0, 2), "\x1f\x8b");
  }
  close(fd);
}

INSTANTIATE_TEST_SUITE_P(RealTools, TarFixtureTest,
                         ::testing::Values(Fixture{"gnutar_gnu.tar", true},
                                           Fixture{"gnutar_pax.tar", true},
                                           Fixture{"gnutar_ustar.tar", true},
                                           Fixture{"gnutar_v7.tar", false},
                                           Fixture{"python_gnu.tar", true},
                                           Fixture{"python_pax.tar", true}),
                         [](const auto& info) {
                           return info.param.file.substr(
                               0, info.param.file.find('.'));
                         });

TEST(TarIndexerTest, HopsOverMemberData) {
  const std::string archive = Member("a.gz", std::string(5000, 'a')) +
                              Member("b.gz", "bb") + EndMarker();
  std::vector<TarReadRequest> reads;
  TarIndex index = IndexString(archive, {}, &reads);
  ASSERT_TRUE(index.error.ok()) << index.error;
  EXPECT_EQ(index.members,
            (std::vector<TarMember>{{"a.gz", 512, 5000}, {"b.gz", 6144, 2}}));
  // Three header reads (a, b, end marker); never the data.
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[0].offset, 0u);
  EXPECT_EQ(reads[1].offset, 5632u);
  EXPECT_EQ(reads[2].offset, 6656u);
  for (const TarReadRequest& read : reads) EXPECT_EQ(read.length, 512u);
}

TEST(TarIndexerTest, ZeroLengthFileIsAnEmptyArchive) {
  TarIndex index = IndexString("");
  EXPECT_TRUE(index.error.ok()) << index.error;
  EXPECT_THAT(index.members, IsEmpty());
}

TEST(TarIndexerTest, EofAtHeaderBoundaryEndsCleanly) {
  TarIndex index = IndexString(Member("a.gz", "abc"));
  EXPECT_TRUE(index.error.ok()) << index.error;
  EXPECT_EQ(index.members.size(), 1u);
}

TEST(TarIndexerTest, GarbageIsNotATar) {
  TarIndex index = IndexString(std::string(2048, 'x'));
  EXPECT_EQ(index.error.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(index.error.message(), HasSubstr("not a tar archive"));
  EXPECT_THAT(index.members, IsEmpty());
}

TEST(TarIndexerTest, BadChecksumKeepsEarlierMembers) {
  std::string second = Member("b.gz", "bb");
  second[0] = 'c';  // name changed, checksum not updated
  TarIndex index = IndexString(Member("a.gz", "a") + second + EndMarker());
  EXPECT_EQ(index.error.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(index.error.message(), HasSubstr("checksum at offset 1024"));
  EXPECT_EQ(index.members, (std::vector<TarMember>{{"a.gz", 512, 1}}));
}

TEST(TarIndexerTest, TruncatedHeaderKeepsEarlierMembers) {
  const std::string archive = Member("a.gz", "a") + Member("b.gz", "bb");
  TarIndex index = IndexString(archive.substr(0, 1024 + 100));
  EXPECT_EQ(index.error.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(index.error.message(), HasSubstr("truncated"));
  EXPECT_EQ(index.members.size(), 1u);
}

TEST(TarIndexerTest, MemberRunningPastEndOfFile) {
  const std::string archive =
      Member("a.gz", "a") + Header("b.gz", 10000) + std::string(512, 'b');
  TarIndex index = IndexString(archive);
  EXPECT_EQ(index.error.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(index.error.message(), HasSubstr("runs past the end"));
  EXPECT_EQ(index.members.size(), 1u);
}

TEST(TarIndexerTest, TruncatedPaddingKeepsCompleteMember) {
  const std::string archive = Member("a.gz", "abc");
  TarIndex index = IndexString(archive.substr(0, 512 + 3));
  EXPECT_EQ(index.error.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(index.members, (std::vector<TarMember>{{"a.gz", 512, 3}}));
}

TEST(TarIndexerTest, PaxOverridesPathAndSize) {
  const std::string records = "13 size=5000\n20 path=pax/name.gz\n";
  const std::string archive = Member("PaxHeader", records, 'x') +
                              Header("short.gz", 0) + std::string(5120, 'd') +
                              EndMarker();
  TarIndex index = IndexString(archive);
  ASSERT_TRUE(index.error.ok()) << index.error;
  EXPECT_EQ(index.members,
            (std::vector<TarMember>{{"pax/name.gz", 1536, 5000}}));
}

TEST(TarIndexerTest, MalformedPaxRecord) {
  TarIndex index = IndexString(Member("PaxHeader", "99 path=x\n", 'x') +
                               Member("a.gz", "a") + EndMarker());
  EXPECT_EQ(index.error.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(index.error.message(), HasSubstr("malformed pax"));
}

TEST(TarIndexerTest, GnuBase256Size) {
  std::string size_field(12, '\0');
  size_field[0] = '\x80';
  size_field[11] = 3;
  const std::string archive =
      Header("a.gz", 0, '0', size_field) + std::string(512, 'a') + EndMarker();
  TarIndex index = IndexString(archive);
  ASSERT_TRUE(index.error.ok()) << index.error;
  EXPECT_EQ(index.members, (std::vector<TarMember>{{"a.gz", 512, 3}}));
}

TEST(TarIndexerTest, LimitOnMembers) {
  TarIndex index = IndexString(Member("a.gz", "a") + Member("b.gz", "b"),
                               {.max_members = 1});
  EXPECT_EQ(index.error.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(index.members.size(), 1u);
}

TEST(TarIndexerTest, LimitOnLongNames) {
  const std::string archive =
      Member("././@LongLink", std::string(300, 'n'), 'L') + Member("a", "a");
  TarIndex index = IndexString(archive, {.max_name_length = 200});
  EXPECT_EQ(index.error.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(index.error.message(), HasSubstr("long name"));
}

TEST(TarIndexerTest, LimitOnPaxSize) {
  const std::string archive = Member("PaxHeader", "12 path=abc\n", 'x') +
                              Member("a", "a") + EndMarker();
  TarIndex index = IndexString(archive, {.max_pax_size = 8});
  EXPECT_EQ(index.error.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(index.error.message(), HasSubstr("pax header"));
}

TEST(TarIndexerTest, ShortReadMeansTruncation) {
  const std::string archive = Member("a.gz", "a") + EndMarker();
  TarIndexer indexer(archive.size());
  ASSERT_TRUE(indexer.OnData(archive.substr(0, 512)).ok());
  absl::Status status = indexer.OnData(archive.substr(1024, 100));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(indexer.finished());
  EXPECT_EQ(indexer.OnData("").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(indexer.TakeIndex().members.size(), 1u);
}

TEST(IndexTarFileTest, FileShorterThanStatedSize) {
  const std::string archive = Member("a.gz", "abc");  // no end marker
  std::string path = ::testing::TempDir() + "/short_tar_XXXXXX";
  int fd = mkstemp(path.data());
  ASSERT_GE(fd, 0);
  unlink(path.c_str());
  ASSERT_EQ(write(fd, archive.data(), archive.size()),
            static_cast<ssize_t>(archive.size()));
  // The caller believes the file is one block longer than it is.
  absl::StatusOr<TarIndex> index = IndexTarFile(fd, archive.size() + 512);
  close(fd);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->error.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(index->error.message(), HasSubstr("truncated"));
  EXPECT_EQ(index->members, (std::vector<TarMember>{{"a.gz", 512, 3}}));
}

TEST(IndexTarFileTest, ReadErrorIsAStatus) {
  absl::StatusOr<TarIndex> index = IndexTarFile(-1, 4096);
  EXPECT_FALSE(index.ok());
}

}  // namespace
}  // namespace sluice::io
