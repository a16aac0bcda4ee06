#include "stages/audio/codec/internal/memory_sound_file.h"

#include <cstdio>
#include <cstring>

namespace sluice::audio::internal {
namespace {

MemoryReader& Reader(void* user_data) {
  return *static_cast<MemoryReader*>(user_data);
}

sf_count_t Size(const MemoryReader& reader) {
  return static_cast<sf_count_t>(reader.bytes.size());
}

sf_count_t GetFileLength(void* user_data) { return Size(Reader(user_data)); }

sf_count_t Seek(sf_count_t offset, int whence, void* user_data) {
  MemoryReader& reader = Reader(user_data);
  sf_count_t base = 0;
  switch (whence) {
    case SEEK_SET:
      base = 0;
      break;
    case SEEK_CUR:
      base = reader.position;
      break;
    case SEEK_END:
      base = Size(reader);
      break;
    default:
      return -1;
  }
  sf_count_t target = 0;
  if (__builtin_add_overflow(base, offset, &target) || target < 0) return -1;
  reader.position = target;
  return target;
}

sf_count_t Read(void* destination, sf_count_t count, void* user_data) {
  MemoryReader& reader = Reader(user_data);
  const sf_count_t size = Size(reader);
  if (count <= 0 || reader.position >= size) return 0;
  const sf_count_t n = std::min(count, size - reader.position);
  std::memcpy(destination, reader.bytes.data() + reader.position,
              static_cast<size_t>(n));
  reader.position += n;
  return n;
}

sf_count_t Write(const void*, sf_count_t, void*) { return 0; }

sf_count_t Tell(void* user_data) { return Reader(user_data).position; }

}  // namespace

SF_VIRTUAL_IO& MemoryVirtualIo() {
  static SF_VIRTUAL_IO io = {&GetFileLength, &Seek, &Read, &Write, &Tell};
  return io;
}

MemorySoundFile::MemorySoundFile(std::span<const std::byte> bytes)
    : reader_{bytes} {
  file_ = sf_open_virtual(&MemoryVirtualIo(), SFM_READ, &info_, &reader_);
  if (file_ == nullptr) info_ = SF_INFO{};
}

MemorySoundFile::~MemorySoundFile() {
  if (file_ != nullptr) sf_close(file_);
}

}  // namespace sluice::audio::internal
