// Test helper: decodes an encoded clip in memory with libsndfile
// (sf_open_virtual in read mode), the way the audio loader will.
//
//   DecodedClip clip = DecodeClip(bytes);
//   if (clip.opened) EXPECT_EQ(clip.sample_rate, 16000);
#ifndef SLUICE_TESTS_BINDINGS_CLI_DECODED_CLIP_H_
#define SLUICE_TESTS_BINDINGS_CLI_DECODED_CLIP_H_

#include <sndfile.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

namespace sluice::testing {

// What libsndfile made of a clip.
struct DecodedClip {
  bool opened = false;  // sf_open_virtual succeeded
  int sample_rate = 0;
  int channels = 0;
  int64_t frames = 0;          // as the header claims (sf_info.frames)
  int64_t frames_read = 0;     // what sf_readf_float delivered
  bool read_error = false;     // sf_error after reading
  std::vector<float> samples;  // interleaved
};

inline DecodedClip DecodeClip(std::span<const std::byte> bytes) {
  struct Memory {
    std::span<const std::byte> bytes;
    sf_count_t position = 0;
  } memory{bytes};
  SF_VIRTUAL_IO io{
      [](void* user) -> sf_count_t {
        return static_cast<Memory*>(user)->bytes.size();
      },
      [](sf_count_t offset, int whence, void* user) -> sf_count_t {
        Memory& m = *static_cast<Memory*>(user);
        const sf_count_t base = whence == SEEK_SET   ? 0
                                : whence == SEEK_CUR ? m.position
                                                     : m.bytes.size();
        m.position = base + offset;
        return m.position;
      },
      [](void* out, sf_count_t count, void* user) -> sf_count_t {
        Memory& m = *static_cast<Memory*>(user);
        const sf_count_t n = std::clamp<sf_count_t>(
            static_cast<sf_count_t>(m.bytes.size()) - m.position, 0, count);
        if (n > 0) std::memcpy(out, m.bytes.data() + m.position, n);
        m.position += n;
        return n;
      },
      nullptr,
      [](void* user) -> sf_count_t {
        return static_cast<Memory*>(user)->position;
      }};
  DecodedClip clip;
  SF_INFO info{};
  SNDFILE* file = sf_open_virtual(&io, SFM_READ, &info, &memory);
  if (file == nullptr) return clip;
  clip.opened = true;
  clip.sample_rate = info.samplerate;
  clip.channels = info.channels;
  clip.frames = info.frames;
  clip.samples.resize(info.frames * info.channels);
  clip.frames_read = sf_readf_float(file, clip.samples.data(), info.frames);
  clip.read_error = sf_error(file) != SF_ERR_NO_ERROR;
  clip.samples.resize(clip.frames_read * info.channels);
  sf_close(file);
  return clip;
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_BINDINGS_CLI_DECODED_CLIP_H_
