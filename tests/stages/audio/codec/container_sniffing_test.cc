#include "stages/audio/codec/internal/container_sniffing.h"

#include <string>

#include "gtest/gtest.h"

namespace sluice::audio::internal {
namespace {

using namespace std::string_literals;

std::span<const std::byte> Bytes(const std::string& text) {
  return std::as_bytes(std::span(text));
}

std::string Le32(uint32_t v) {
  return std::string{static_cast<char>(v), static_cast<char>(v >> 8),
                     static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
}

TEST(AudioSniffContainerTest, Signatures) {
  EXPECT_EQ(SniffContainer(Bytes("RIFF\0\0\0\0WAVEfmt "s)), Container::kWav);
  EXPECT_EQ(SniffContainer(Bytes("RF64\0\0\0\0WAVEds64"s)), Container::kWav);
  EXPECT_EQ(SniffContainer(Bytes("RIFF\0\0\0\0AVI LIST"s)),
            Container::kUnknown);
  EXPECT_EQ(SniffContainer(Bytes("fLaC\0\0\0\x22"s)), Container::kFlac);
  EXPECT_EQ(SniffContainer(Bytes("OggS\0\x02"s)), Container::kOgg);
  EXPECT_EQ(SniffContainer(Bytes("\xff\xfb\x90\x64"s)), Container::kMpeg);
  EXPECT_EQ(SniffContainer(Bytes("\xff\x1b"s)), Container::kUnknown);
  EXPECT_EQ(SniffContainer(Bytes("FORM\0\0\0\0AIFF"s)), Container::kUnknown);
  EXPECT_EQ(SniffContainer({}), Container::kUnknown);
}

TEST(AudioSniffContainerTest, SkipsId3Tags) {
  // A 5-byte tag body (syncsafe size 0 0 0 5), then an MPEG frame.
  const std::string tag =
      std::string("ID3\x04\x00\x00\0\0\0\x05", 10) + "12345";
  EXPECT_EQ(SniffContainer(Bytes(tag + "\xff\xfb\x90")), Container::kMpeg);
  EXPECT_EQ(SniffContainer(Bytes(tag + tag + "fLaC")), Container::kFlac);
  EXPECT_EQ(SniffContainer(Bytes(tag + "FORM")), Container::kUnknown);
  // A tag that claims more bytes than there are.
  EXPECT_EQ(
      SniffContainer(Bytes(std::string("ID3\x04\0\0\x7f\x7f\x7f\x7f", 10))),
      Container::kUnknown);
  std::string many;
  for (int i = 0; i < 10; ++i) many += tag;
  EXPECT_EQ(SniffContainer(Bytes(many + "fLaC")), Container::kUnknown);
}

TEST(AudioWavDataShortfallTest, ComparesTheDataChunkWithTheBytes) {
  const std::string head = "RIFF" + Le32(0) + "WAVE" + "fmt " + Le32(2) + "ab";
  EXPECT_EQ(WavDataShortfall(Bytes(head + "data" + Le32(4) + "1234")), 0u);
  EXPECT_EQ(WavDataShortfall(Bytes(head + "data" + Le32(10) + "1234")), 6u);
  // Streaming placeholders and missing data chunks say nothing.
  EXPECT_EQ(WavDataShortfall(Bytes(head + "data" + Le32(0) + "1234")), 0u);
  EXPECT_EQ(WavDataShortfall(Bytes(head + "data" + Le32(0xffffffff))), 0u);
  EXPECT_EQ(WavDataShortfall(Bytes(head)), 0u);
  // An odd chunk is padded to an even length.
  const std::string odd = "RIFF" + Le32(0) + "WAVE" + "LIST" + Le32(3) + "abc_";
  EXPECT_EQ(WavDataShortfall(Bytes(odd + "data" + Le32(9) + "1234")), 5u);
  // A chunk size running past the end stops the walk.
  EXPECT_EQ(WavDataShortfall(Bytes("RIFF" + Le32(0) + "WAVE" + "LIST" +
                                   Le32(0xfffffff0) + "data" + Le32(99))),
            0u);
  // Big-endian RIFX sizes.
  const std::string rifx = "RIFX" + Le32(0) + "WAVE" + "data" +
                           std::string("\0\0\0\x08", 4) + "1234";
  EXPECT_EQ(WavDataShortfall(Bytes(rifx)), 4u);
}

}  // namespace
}  // namespace sluice::audio::internal
