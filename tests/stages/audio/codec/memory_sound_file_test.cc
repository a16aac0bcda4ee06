#include "stages/audio/codec/internal/memory_sound_file.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/stages/audio/codec/test_clips.h"

namespace sluice::audio::internal {
namespace {

class AudioMemoryVirtualIoTest : public ::testing::Test {
 protected:
  sf_count_t Seek(sf_count_t offset, int whence) {
    return MemoryVirtualIo().seek(offset, whence, &reader_);
  }
  std::string Read(sf_count_t count) {
    std::string out(std::max<sf_count_t>(count, 0), '?');
    out.resize(MemoryVirtualIo().read(out.data(), count, &reader_));
    return out;
  }
  sf_count_t Tell() { return MemoryVirtualIo().tell(&reader_); }

  const std::string text_ = "0123456789";
  MemoryReader reader_{std::as_bytes(std::span(text_))};
};

TEST_F(AudioMemoryVirtualIoTest, ReadsAreClampedToTheSpan) {
  EXPECT_EQ(MemoryVirtualIo().get_filelen(&reader_), 10);
  EXPECT_EQ(Read(4), "0123");
  EXPECT_EQ(Tell(), 4);
  EXPECT_EQ(Read(100), "456789");
  EXPECT_EQ(Read(1), "");
  EXPECT_EQ(Read(-5), "");
  EXPECT_EQ(Tell(), 10);
}

TEST_F(AudioMemoryVirtualIoTest, Seeks) {
  EXPECT_EQ(Seek(3, SEEK_SET), 3);
  EXPECT_EQ(Seek(2, SEEK_CUR), 5);
  EXPECT_EQ(Read(1), "5");
  EXPECT_EQ(Seek(-2, SEEK_END), 8);
  EXPECT_EQ(Read(5), "89");
  // Past the end: allowed, reads give nothing.
  EXPECT_EQ(Seek(1000, SEEK_SET), 1000);
  EXPECT_EQ(Read(4), "");
  // Negative, overflowing or unknown seeks fail and keep the position.
  EXPECT_EQ(Seek(-1, SEEK_SET), -1);
  EXPECT_EQ(Seek(-2000, SEEK_CUR), -1);
  EXPECT_EQ(Seek(std::numeric_limits<sf_count_t>::max(), SEEK_CUR), -1);
  EXPECT_EQ(Seek(std::numeric_limits<sf_count_t>::min(), SEEK_END), -1);
  EXPECT_EQ(Seek(0, 42), -1);
  EXPECT_EQ(Tell(), 1000);
  EXPECT_EQ(Seek(-995, SEEK_CUR), 5);
  EXPECT_EQ(Read(2), "56");
}

TEST_F(AudioMemoryVirtualIoTest, WritesNothing) {
  EXPECT_EQ(MemoryVirtualIo().write("ab", 2, &reader_), 0);
  EXPECT_EQ(Read(2), "01");
}

TEST(AudioMemorySoundFileTest, OpensAClipAndRefusesGarbage) {
  const std::vector<float> sine = testing::Sine(100, 8000, 440, 0.5);
  const std::vector<std::byte> clip =
      testing::EncodeClip(sine, 1, 8000, SF_FORMAT_WAV | SF_FORMAT_FLOAT);
  MemorySoundFile file(clip);
  ASSERT_NE(file.get(), nullptr);
  EXPECT_EQ(file.info().frames, 100);
  EXPECT_EQ(file.info().samplerate, 8000);
  std::vector<float> read(100);
  EXPECT_EQ(sf_readf_float(file.get(), read.data(), 100), 100);
  EXPECT_EQ(read, sine);

  const std::string garbage = "RIFF\x10\0\0\0WAVEjunkjunk";
  MemorySoundFile refused(std::as_bytes(std::span(garbage)));
  EXPECT_EQ(refused.get(), nullptr);
  EXPECT_EQ(refused.info().channels, 0);
}

}  // namespace
}  // namespace sluice::audio::internal
