// A libsndfile handle reading from a byte span through virtual I/O, never
// outside it.
//
//   MemorySoundFile file(bytes);
//   if (file.get() == nullptr) ...;  // not something libsndfile can open
//   sf_readf_float(file.get(), buffer, frames);
//
// The callbacks clamp every read to the span; seeks to a negative position
// or past the int64 range fail and leave the position unchanged; seeks past
// the end succeed and later reads there return 0 bytes (like lseek + read on
// a file); writes always write nothing. The span must outlive the object.
#ifndef SLUICE_STAGES_AUDIO_CODEC_INTERNAL_MEMORY_SOUND_FILE_H_
#define SLUICE_STAGES_AUDIO_CODEC_INTERNAL_MEMORY_SOUND_FILE_H_

#include <sndfile.h>

#include <cstddef>
#include <span>

namespace sluice::audio::internal {

// The read position in a span, as the virtual I/O callbacks see it.
struct MemoryReader {
  std::span<const std::byte> bytes;
  sf_count_t position = 0;  // may be past the end, never negative
};

// The virtual I/O callbacks over a MemoryReader passed as user data.
SF_VIRTUAL_IO& MemoryVirtualIo();

// Opens `bytes` for reading with libsndfile (format guessed from the
// header). Pinned in memory: libsndfile keeps a pointer to the reader.
class MemorySoundFile {
 public:
  explicit MemorySoundFile(std::span<const std::byte> bytes);
  ~MemorySoundFile();
  MemorySoundFile(const MemorySoundFile&) = delete;
  MemorySoundFile& operator=(const MemorySoundFile&) = delete;

  // The open handle; null when libsndfile refused the bytes.
  SNDFILE* get() const { return file_; }
  // The header as libsndfile read it (zeroes when get() is null).
  const SF_INFO& info() const { return info_; }

 private:
  MemoryReader reader_;
  SF_INFO info_{};
  SNDFILE* file_ = nullptr;
};

}  // namespace sluice::audio::internal

#endif  // SLUICE_STAGES_AUDIO_CODEC_INTERNAL_MEMORY_SOUND_FILE_H_
