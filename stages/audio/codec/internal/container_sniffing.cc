#include "stages/audio/codec/internal/container_sniffing.h"

#include <cstring>
#include <string_view>

namespace sluice::audio::internal {
namespace {

constexpr size_t kId3HeaderSize = 10;
constexpr int kMaxId3Tags = 4;

bool HasTag(std::span<const std::byte> bytes, size_t offset,
            std::string_view tag) {
  return bytes.size() >= offset + tag.size() &&
         std::memcmp(bytes.data() + offset, tag.data(), tag.size()) == 0;
}

uint8_t Byte(std::span<const std::byte> bytes, size_t i) {
  return static_cast<uint8_t>(bytes[i]);
}

uint32_t ReadU32(std::span<const std::byte> bytes, size_t offset,
                 bool big_endian) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t b = Byte(bytes, offset + (big_endian ? i : 3 - i));
    value = (value << 8) | b;
  }
  return value;
}

// The size of an ID3v2 tag at the start of `bytes` (header + syncsafe
// body + footer when flagged), or 0 when there is none.
size_t Id3TagSize(std::span<const std::byte> bytes) {
  if (!HasTag(bytes, 0, "ID3") || bytes.size() < kId3HeaderSize) return 0;
  size_t body = 0;
  for (size_t i = 6; i < 10; ++i) body = (body << 7) | (Byte(bytes, i) & 0x7f);
  const bool has_footer = (Byte(bytes, 5) & 0x10) != 0;
  return kId3HeaderSize + body + (has_footer ? kId3HeaderSize : 0);
}

Container SniffSignature(std::span<const std::byte> bytes) {
  if ((HasTag(bytes, 0, "RIFF") || HasTag(bytes, 0, "RIFX") ||
       HasTag(bytes, 0, "RF64")) &&
      HasTag(bytes, 8, "WAVE")) {
    return Container::kWav;
  }
  if (HasTag(bytes, 0, "fLaC")) return Container::kFlac;
  if (HasTag(bytes, 0, "OggS")) return Container::kOgg;
  if (bytes.size() >= 2 && Byte(bytes, 0) == 0xff &&
      (Byte(bytes, 1) & 0xe0) == 0xe0) {
    return Container::kMpeg;
  }
  return Container::kUnknown;
}

}  // namespace

Container SniffContainer(std::span<const std::byte> bytes) {
  for (int tags = 0; tags < kMaxId3Tags; ++tags) {
    const size_t tag_size = Id3TagSize(bytes);
    if (tag_size == 0) return SniffSignature(bytes);
    if (tag_size >= bytes.size()) return Container::kUnknown;
    bytes = bytes.subspan(tag_size);
  }
  return Container::kUnknown;
}

uint64_t WavDataShortfall(std::span<const std::byte> bytes) {
  const bool big_endian = HasTag(bytes, 0, "RIFX");
  if (!(HasTag(bytes, 0, "RIFF") || big_endian) || !HasTag(bytes, 8, "WAVE")) {
    return 0;
  }
  // Chunks after the 12-byte RIFF header: 4-byte id, 4-byte size, body
  // padded to an even length. Each step advances at least 8 bytes.
  uint64_t offset = 12;
  while (offset + 8 <= bytes.size()) {
    const uint32_t size = ReadU32(bytes, offset + 4, big_endian);
    if (HasTag(bytes, offset, "data")) {
      if (size == 0 || size == 0xffffffffu) return 0;
      const uint64_t available = bytes.size() - (offset + 8);
      return size > available ? size - available : 0;
    }
    offset += 8 + uint64_t{size} + (size & 1);
  }
  return 0;
}

}  // namespace sluice::audio::internal
