#include "io/gzip.h"

#include <zlib.h>

#include <string>

#include "gtest/gtest.h"

namespace sluice::io {
namespace {

constexpr size_t kLimit = 64 << 20;

// One gzip member of `raw`, written by zlib at `level`.
std::string Gzip(const std::string& raw, int level = 6) {
  z_stream zs{};
  deflateInit2(&zs, level, Z_DEFLATED, MAX_WBITS + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, raw.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = raw.size();
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = out.size();
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// Incompressible-ish bytes, so sizes are not trivial.
std::string Payload(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    s[i] = static_cast<char>((seed >> 24) % 16);  // some redundancy
  }
  return s;
}

TEST(GunzipTest, RoundTrip) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{3} << 20}) {
    const std::string raw = Payload(n, 1);
    absl::StatusOr<std::string> out = Gunzip(Gzip(raw), kLimit);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, raw) << n;
  }
}

TEST(GunzipTest, GoldenChunk) {
  FILE* f = std::fopen("tests/data/golden/v6_fmt1_a.gz", "rb");
  ASSERT_NE(f, nullptr);
  std::string gz(1 << 16, '\0');
  gz.resize(std::fread(gz.data(), 1, gz.size(), f));
  std::fclose(f);
  absl::StatusOr<std::string> out = Gunzip(gz, kLimit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size(), 16u * 8356);
}

TEST(GunzipTest, MultiMemberOutputsAreConcatenated) {
  // A big first member and a small last one: the trailer's size hint is
  // wrong for the first, so the output must grow.
  const std::string a = Payload(1 << 20, 2);
  const std::string b = Payload(10, 3);
  const std::string c = Payload(5000, 4);
  absl::StatusOr<std::string> out =
      Gunzip(Gzip(a) + Gzip(b, 1) + Gzip(c, 9), kLimit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, a + b + c);
}

TEST(GunzipIntoTest, ReplacesTheBufferContents) {
  std::string out(1 << 20, 'x');  // longer than the output: must be cut
  const std::string small = Payload(5000, 11);
  ASSERT_TRUE(GunzipInto(Gzip(small), kLimit, &out).ok());
  EXPECT_EQ(out, small);
  const std::string big = Payload(2 << 20, 12);  // longer: must grow
  ASSERT_TRUE(GunzipInto(Gzip(big), kLimit, &out).ok());
  EXPECT_EQ(out, big);
  EXPECT_EQ(GunzipInto("nope", kLimit, &out).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GunzipTest, NotGzip) {
  EXPECT_EQ(Gunzip("", kLimit).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Gunzip("plain text, not gzip", kLimit).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GunzipTest, CorruptDeflateData) {
  std::string gz = Gzip(Payload(100000, 5));
  for (size_t i = 20; i < 60; ++i) gz[i] = static_cast<char>(~gz[i]);
  EXPECT_EQ(Gunzip(gz, kLimit).status().code(), absl::StatusCode::kDataLoss);
}

TEST(GunzipTest, CrcMismatch) {
  std::string gz = Gzip(Payload(1000, 6));
  gz[gz.size() - 8] ^= 1;  // first byte of the CRC32
  EXPECT_EQ(Gunzip(gz, kLimit).status().code(), absl::StatusCode::kDataLoss);
}

TEST(GunzipTest, Truncated) {
  const std::string gz = Gzip(Payload(100000, 7));
  for (size_t keep : {size_t{2}, size_t{11}, gz.size() / 2, gz.size() - 3}) {
    absl::Status status = Gunzip(gz.substr(0, keep), kLimit).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << keep << status;
  }
}

TEST(GunzipTest, TrailingGarbage) {
  const std::string gz = Gzip(Payload(1000, 8)) + "junk";
  absl::Status status = Gunzip(gz, kLimit).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
}

TEST(GunzipTest, BombOverTheLimitIsAnError) {
  const std::string zeros(16 << 20, '\0');  // 16 MiB of zeros: ~16 KiB gzip
  const std::string gz = Gzip(zeros, 9);
  ASSERT_LT(gz.size(), 64u << 10);
  absl::Status status = Gunzip(gz, 1 << 20).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(status.message().find("1048576"), absl::string_view::npos)
      << status;
}

TEST(GunzipTest, OutputExactlyAtTheLimitIsAccepted) {
  const std::string raw = Payload(70000, 9);
  absl::StatusOr<std::string> out = Gunzip(Gzip(raw), raw.size());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, raw);
  EXPECT_EQ(Gunzip(Gzip(raw), raw.size() - 1).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(GunzipIntoTest, LimitHoldsWithALargerReusedBuffer) {
  std::string out(8 << 20, 'x');
  const std::string gz = Gzip(std::string(4 << 20, '\0'), 9);
  EXPECT_EQ(GunzipInto(gz, 1 << 20, &out).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(GunzipTest, LimitCountsAllMembers) {
  const std::string raw = Payload(1000, 10);
  EXPECT_EQ(Gunzip(Gzip(raw) + Gzip(raw), 1500).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace sluice::io
