#include "tests/stages/audio/codec/test_clips.h"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>

namespace sluice::audio::testing {
namespace {

// A growable in-memory file for libsndfile's writer.
struct MemoryWriter {
  std::vector<std::byte> bytes;
  sf_count_t position = 0;
};

MemoryWriter& Writer(void* user_data) {
  return *static_cast<MemoryWriter*>(user_data);
}

SF_VIRTUAL_IO& WriterIo() {
  static SF_VIRTUAL_IO io = {
      [](void* w) -> sf_count_t { return Writer(w).bytes.size(); },
      [](sf_count_t offset, int whence, void* w) -> sf_count_t {
        MemoryWriter& writer = Writer(w);
        const sf_count_t base = whence == SEEK_SET   ? 0
                                : whence == SEEK_CUR ? writer.position
                                                     : writer.bytes.size();
        if (base + offset < 0) return -1;
        return writer.position = base + offset;
      },
      [](void* dest, sf_count_t count, void* w) -> sf_count_t {
        MemoryWriter& writer = Writer(w);
        const sf_count_t size = writer.bytes.size();
        if (writer.position >= size) return 0;
        const sf_count_t n = std::min(count, size - writer.position);
        std::memcpy(dest, writer.bytes.data() + writer.position, n);
        writer.position += n;
        return n;
      },
      [](const void* src, sf_count_t count, void* w) -> sf_count_t {
        MemoryWriter& writer = Writer(w);
        const size_t end = writer.position + count;
        if (end > writer.bytes.size()) writer.bytes.resize(end);
        std::memcpy(writer.bytes.data() + writer.position, src, count);
        writer.position += count;
        return count;
      },
      [](void* w) -> sf_count_t { return Writer(w).position; },
  };
  return io;
}

template <typename Sample, typename WriteFn>
std::vector<std::byte> Encode(std::span<const Sample> interleaved, int channels,
                              int sample_rate, int format, WriteFn write) {
  MemoryWriter writer;
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = channels;
  info.format = format;
  SNDFILE* file = sf_open_virtual(&WriterIo(), SFM_WRITE, &info, &writer);
  if (file == nullptr) return {};
  const sf_count_t frames = interleaved.size() / channels;
  const bool ok = write(file, interleaved.data(), frames) == frames;
  sf_close(file);
  if (!ok) return {};
  return std::move(writer.bytes);
}

}  // namespace

std::vector<float> Sine(size_t frames, int sample_rate, double frequency,
                        double amplitude) {
  std::vector<float> samples(frames);
  for (size_t i = 0; i < frames; ++i) {
    samples[i] =
        static_cast<float>(amplitude * std::sin(2 * std::numbers::pi *
                                                frequency * i / sample_rate));
  }
  return samples;
}

std::vector<std::byte> EncodeClip(std::span<const float> interleaved,
                                  int channels, int sample_rate, int format) {
  return Encode(interleaved, channels, sample_rate, format, &sf_writef_float);
}

std::vector<std::byte> EncodeIntClip(std::span<const int32_t> interleaved,
                                     int channels, int sample_rate,
                                     int format) {
  return Encode(interleaved, channels, sample_rate, format, &sf_writef_int);
}

ExactSamples RandomExactSamples(size_t count, int bits, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t half = int64_t{1} << (bits - 1);
  std::uniform_int_distribution<int64_t> value(-half, half - 1);
  ExactSamples samples;
  for (size_t i = 0; i < count; ++i) {
    const int64_t v = value(rng);
    samples.ints.push_back(
        static_cast<int32_t>(v * (int64_t{1} << (32 - bits))));
    samples.floats.push_back(static_cast<float>(static_cast<double>(v) / half));
  }
  return samples;
}

}  // namespace sluice::audio::testing
