#include "bindings/cli/internal/sndfile_memory.h"

#include <sndfile.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::cli::internal {
namespace {

// libsndfile's virtual I/O over a growing byte vector.
struct MemoryFile {
  std::vector<std::byte> bytes;
  sf_count_t position = 0;
};

sf_count_t MemoryLength(void* user) {
  return static_cast<sf_count_t>(static_cast<MemoryFile*>(user)->bytes.size());
}

sf_count_t MemorySeek(sf_count_t offset, int whence, void* user) {
  MemoryFile& file = *static_cast<MemoryFile*>(user);
  const sf_count_t base = whence == SEEK_SET   ? 0
                          : whence == SEEK_CUR ? file.position
                                               : MemoryLength(user);
  if (base + offset < 0) return -1;
  file.position = base + offset;
  return file.position;
}

sf_count_t MemoryRead(void* out, sf_count_t count, void* user) {
  MemoryFile& file = *static_cast<MemoryFile*>(user);
  const sf_count_t n =
      std::clamp<sf_count_t>(MemoryLength(user) - file.position, 0, count);
  if (n > 0) std::memcpy(out, file.bytes.data() + file.position, n);
  file.position += n;
  return n;
}

sf_count_t MemoryWrite(const void* in, sf_count_t count, void* user) {
  MemoryFile& file = *static_cast<MemoryFile*>(user);
  if (file.position + count > MemoryLength(user)) {
    file.bytes.resize(file.position + count);
  }
  std::memcpy(file.bytes.data() + file.position, in, count);
  file.position += count;
  return count;
}

sf_count_t MemoryTell(void* user) {
  return static_cast<MemoryFile*>(user)->position;
}

// Ogg's page checksum: CRC-32, polynomial 0x04c11db7, not reflected, no
// initial or final xor, over the page with its checksum field zeroed.
uint32_t OggCrc(std::span<const std::byte> page) {
  static const std::array<uint32_t, 256> kTable = [] {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t r = i << 24;
      for (int bit = 0; bit < 8; ++bit) {
        r = (r & 0x80000000u) ? (r << 1) ^ 0x04c11db7u : r << 1;
      }
      table[i] = r;
    }
    return table;
  }();
  uint32_t crc = 0;
  for (std::byte b : page) {
    crc = (crc << 8) ^ kTable[((crc >> 24) ^ std::to_integer<uint32_t>(b))];
  }
  return crc;
}

}  // namespace

absl::Status SetOggSerial(std::vector<std::byte>& ogg, uint32_t serial) {
  constexpr size_t kHeaderBytes = 27;
  size_t page = 0;
  while (page < ogg.size()) {
    if (ogg.size() - page < kHeaderBytes ||
        std::memcmp(ogg.data() + page, "OggS", 4) != 0) {
      return absl::InternalError("not an Ogg page");
    }
    const size_t segments = std::to_integer<size_t>(ogg[page + 26]);
    size_t length = kHeaderBytes + segments;
    if (page + length > ogg.size()) {
      return absl::InternalError("truncated Ogg page");
    }
    for (size_t s = 0; s < segments; ++s) {
      length += std::to_integer<size_t>(ogg[page + kHeaderBytes + s]);
    }
    if (page + length > ogg.size()) {
      return absl::InternalError("truncated Ogg page");
    }
    std::memcpy(ogg.data() + page + 14, &serial, 4);  // little-endian
    std::memset(ogg.data() + page + 22, 0, 4);
    const uint32_t crc = OggCrc(std::span(ogg).subspan(page, length));
    std::memcpy(ogg.data() + page + 22, &crc, 4);
    page += length;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::byte>> EncodeInMemory(
    std::span<const float> samples, int sample_rate, int channels, int format) {
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = channels;
  info.format = format;
  if (channels < 1 || samples.size() % channels != 0 ||
      !sf_format_check(&info)) {
    return absl::InvalidArgumentError(
        absl::StrCat("libsndfile cannot write format 0x", absl::Hex(format),
                     " at ", sample_rate, " Hz with ", channels, " channels (",
                     samples.size(), " samples)"));
  }
  SF_VIRTUAL_IO io{MemoryLength, MemorySeek, MemoryRead, MemoryWrite,
                   MemoryTell};
  MemoryFile memory;
  SNDFILE* file = sf_open_virtual(&io, SFM_WRITE, &info, &memory);
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("libsndfile cannot write format 0x", absl::Hex(format),
                     ": ", sf_strerror(nullptr)));
  }
  sf_command(file, SFC_SET_ADD_PEAK_CHUNK, nullptr, SF_FALSE);
  const sf_count_t frames = static_cast<sf_count_t>(samples.size()) / channels;
  const sf_count_t written = sf_writef_float(file, samples.data(), frames);
  const std::string error = sf_strerror(file);
  if (sf_close(file) != 0 || written != frames) {
    return absl::InternalError(absl::StrCat(
        "libsndfile failed writing format 0x", absl::Hex(format), ": ", error));
  }
  return std::move(memory.bytes);
}

}  // namespace sluice::cli::internal
